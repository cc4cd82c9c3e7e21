"""The common shape of an OTLP/JSON span, read fast: the fast path of
:mod:`agenteval.traces.otlp`'s JSON decoder.

:func:`plain_span` reads a span written the way the OTel Collector and the SDK exporters
write it — lowerCamelCase keys, hex ids, times as decimal strings or integers, attribute
values with one ``stringValue`` / ``intValue`` / ``boolValue`` / ``doubleValue`` /
``arrayValue`` / ``kvlistValue`` each — into exactly the :class:`SpanRecord` the checked
decoder (``otlp._span``) makes of it, without building a field path per value. Anything
else (snake_case keys, base64 ids, an empty or two-key AnyValue, bytes, a wrong type, a
time out of range, nesting past ``MAX_DEPTH``...) raises :class:`NotPlain`, and the
caller reads that span with the checked decoder, which makes the same record or words
the refusal with the field's path. So this module only decides how fast a span is read,
never what it reads as (tests/traces/test_otlp_plain.py checks the two agree).

On the spans of bench/import_traces.py (2-core machine shared with other work, CPU time,
best of 3): the checked decoder takes 44 µs a span, this one 20 µs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval._util.nanos import MAX_NS
from agenteval._util.untrusted import MAX_DEPTH, clean_text
from agenteval.traces.records import SpanEvent, SpanRecord

__all__ = ["NotPlain", "plain_attributes", "plain_span"]

_HEX = frozenset("0123456789abcdefABCDEF")
_STATUS = {0: "unset", 1: "ok", 2: "error"}
_STATUS_NAMES = {
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
}
# the keys of a span this module reads; a span with any other key of the checked
# decoder's (snake_case, or none of these) goes to it
_KNOWN = frozenset(
    (
        "traceId",
        "spanId",
        "parentSpanId",
        "name",
        "kind",
        "startTimeUnixNano",
        "endTimeUnixNano",
        "attributes",
        "events",
        "status",
        "links",
        "traceState",
        "flags",
        "droppedAttributesCount",
        "droppedEventsCount",
        "droppedLinksCount",
    )
)
_SNAKE = frozenset(
    (
        "trace_id",
        "span_id",
        "parent_span_id",
        "start_time_unix_nano",
        "end_time_unix_nano",
        "time_unix_nano",
    )
)


class NotPlain(Exception):
    """The span is not in the common shape: read it with the checked decoder."""


def _id(v: Any, size: int) -> str | None:
    if v is None or v == "":
        return None
    if type(v) is not str or len(v) != 2 * size or not _HEX.issuperset(v):
        raise NotPlain
    h = v.lower()
    return None if h.count("0") == 2 * size else h


def _ns(v: Any) -> int | None:
    if v is None or v == "":
        return None
    if type(v) is str:
        if not (v.isascii() and v.isdigit()) or len(v) > 20:
            raise NotPlain
        v = int(v)
    elif type(v) is not int:
        raise NotPlain
    if not 0 <= v <= MAX_NS:
        raise NotPlain
    return v or None


def _value(v: Any, depth: int) -> Any:
    if type(v) is not dict or len(v) != 1:
        raise NotPlain
    ((tag, x),) = v.items()
    if tag == "stringValue":
        if type(x) is not str:
            raise NotPlain
        return x if x.isascii() else clean_text(x)
    if tag == "intValue":
        if type(x) is int:
            return x
        if type(x) is not str:
            raise NotPlain
        try:
            return int(x)
        except ValueError:
            raise NotPlain from None
    if tag == "boolValue":
        if type(x) is not bool:
            raise NotPlain
        return x
    if tag == "doubleValue":
        if type(x) is float:
            return x
        if type(x) is int and -(1 << 53) <= x <= 1 << 53:
            return float(x)
        raise NotPlain
    if depth >= MAX_DEPTH:
        raise NotPlain
    if tag == "arrayValue":
        values = x.get("values", []) if type(x) is dict else None
        if type(values) is not list:
            raise NotPlain
        return [_value(item, depth + 1) for item in values]
    if tag == "kvlistValue":
        values = x.get("values", []) if type(x) is dict else None
        if type(values) is not list:
            raise NotPlain
        return plain_attributes(values, depth + 1)
    raise NotPlain


def plain_attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    """A ``[{key, value}]`` list as a dict, as the checked decoder reads it (or
    :class:`NotPlain`)."""
    if items is None:
        return {}
    if type(items) is not list:
        raise NotPlain
    out: dict[str, Any] = {}
    for kv in items:
        if type(kv) is not dict:
            raise NotPlain
        k = kv.get("key")
        if type(k) is not str:
            raise NotPlain
        v = kv.get("value")
        if v is None:
            raise NotPlain
        out[k if k.isascii() else clean_text(k)] = _value(v, depth)
    return out


def _status(st: Any) -> tuple[str, str | None]:
    if st is None:
        return "unset", None
    if type(st) is not dict:
        raise NotPlain
    code = st.get("code", 0)
    if type(code) is int and code in _STATUS:
        status = _STATUS[code]
    elif type(code) is str and code in _STATUS_NAMES:
        status = _STATUS_NAMES[code]
    else:
        raise NotPlain
    message = st.get("message") or None
    return status, clean_text(message) if isinstance(message, str) else None


def _events(raw: Any) -> tuple[SpanEvent, ...]:
    if not raw:
        return ()
    if type(raw) is not list:
        raise NotPlain
    out = []
    for e in raw:
        if type(e) is not dict or _SNAKE.intersection(e):
            raise NotPlain
        name = e.get("name", "")
        out.append(
            SpanEvent(
                clean_text(name) if type(name) is str else str(name),
                plain_attributes(e.get("attributes")),
                _ns(e.get("timeUnixNano")),
            )
        )
    return tuple(out)


def plain_span(s: Any, resource: Mapping[str, Any]) -> SpanRecord:
    """The span ``s`` (a parsed OTLP/JSON span object) as the checked decoder reads it,
    or :class:`NotPlain` (module docstring)."""
    if type(s) is not dict or not _KNOWN.issuperset(s):
        raise NotPlain
    name = s.get("name", "")
    if type(name) is not str:
        raise NotPlain
    status, message = _status(s.get("status"))
    return SpanRecord(
        name if name.isascii() else clean_text(name),
        _id(s.get("spanId"), 8) or "",
        _id(s.get("traceId"), 16) or "",
        _id(s.get("parentSpanId"), 8),
        _ns(s.get("startTimeUnixNano")),
        _ns(s.get("endTimeUnixNano")),
        plain_attributes(s.get("attributes")),
        _events(s.get("events")),
        status,
        message,
        resource,
    )
