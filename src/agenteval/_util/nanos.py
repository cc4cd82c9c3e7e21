"""Times as integer nanoseconds since the Unix epoch, checked: the one conversion every
trace decoder and ``export-otel`` use, so that no time from a file ends in a traceback.

A time is usable when it lies in ``[0, 2**64)`` nanoseconds (1970-01-01 to 2554-07-21
UTC): what OTLP's ``fixed64`` fields can hold, and inside what :class:`datetime.datetime`
can represent. Outside it, :func:`checked_ns`, :func:`parse_ns` and :func:`ns_of` raise
:class:`ValueError` with a short reason, which the callers word with the field's name.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["MAX_NS", "checked_ns", "datetime_of", "ns_of", "parse_ns"]

MAX_NS = (1 << 64) - 1
"""The latest usable time (2554-07-21T23:34:33.709551615Z)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
OUT_OF_RANGE = "out of range (a time between 1970 and 2554 is expected)"


def checked_ns(n: int) -> int:
    """``n`` when it is a usable time; ValueError otherwise."""
    if not 0 <= n <= MAX_NS:
        raise ValueError(OUT_OF_RANGE)
    return n


def parse_ns(value: int | str) -> int:
    """An integer, or a string of ASCII digits (``"²"`` is not one), as a usable time."""
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
            raise ValueError("must be an integer (nanoseconds)")
        if len(value.lstrip("0")) > 20:  # before int(): 5,000 digits would raise
            raise ValueError(OUT_OF_RANGE)
        value = int(value)
    return checked_ns(value)


def ns_of(t: datetime) -> int:
    """``t`` (naive: UTC) as nanoseconds, exactly (no float rounding)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    try:
        d = t - _EPOCH
    except OverflowError:  # e.g. 0001-01-01T00:00+14:00, which is before year 1 in UTC
        raise ValueError(OUT_OF_RANGE) from None
    return checked_ns((d.days * 86400 + d.seconds) * 1_000_000_000 + d.microseconds * 1000)


def datetime_of(ns: int) -> datetime:
    """A usable time as an aware UTC datetime (microseconds; the rest is cut)."""
    return _EPOCH + timedelta(microseconds=checked_ns(ns) // 1000)
