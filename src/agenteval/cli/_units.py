"""The units ``agenteval monitor``'s options take: durations (``250ms``, ``30s``, ``5m``,
``1h``, ``1d``, or plain seconds) and sizes (``1048576``, ``512M``, ``1G``, ``64KiB``)."""

from __future__ import annotations

import re

from agenteval.errors import InputError

__all__ = ["duration", "size"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}
_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]i?B?|B)?\s*$", re.I)


def duration(value: str, option: str) -> float:
    """``90``, ``90s``, ``5m``, ``1h``, ``1d``, ``250ms`` → seconds (> 0)."""
    m = _DURATION.match(value)
    if m is None or float(m.group(1)) <= 0:
        raise InputError(f"{option} must be a positive duration (30s, 5m, 1h, 1d), got {value!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def size(value: str, option: str) -> int:
    """``1048576``, ``512M``, ``1G``, ``64KiB`` → bytes (> 0)."""
    m = _SIZE.match(value)
    if m is None or int(m.group(1)) <= 0:
        raise InputError(f"{option} must be a positive size (512M, 1G), got {value!r}")
    unit = (m.group(2) or "B")[0].upper()
    return int(m.group(1)) * {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[unit]
