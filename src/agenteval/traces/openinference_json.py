"""OpenInference span JSON (Phoenix's span export and REST API) → :class:`SpanRecord`.

Arize Phoenix returns and exports spans as JSON objects::

    {"name": ..., "context": {"trace_id": <hex>, "span_id": <hex>}, "parent_id": <hex|null>,
     "span_kind": "LLM", "start_time": <ISO>, "end_time": <ISO>,
     "status_code": "OK" | "ERROR" | "UNSET", "status_message": ...,
     "attributes": {...}, "events": [{"name", "timestamp": <ISO>, "attributes": {...}}]}

A file holds such spans as JSON lines, as one JSON list, or as one REST API page
(``{"data": [...], "next_cursor": ...}``). Attributes may be flat (``llm.model_name``) or
nested (``{"llm": {"model_name": ...}}``, lists of messages as lists): nested objects are
flattened to dotted keys and lists of objects to ``.N.`` keys, so
:mod:`agenteval.traces.mapping` reads them like OTLP attributes. ``span_kind`` becomes
``openinference.span.kind`` when the attributes lack it. Times are ISO 8601 (a time
without a zone is UTC) or integers of nanoseconds. Ids may carry a ``0x`` prefix.

Malformed spans raise :class:`~agenteval.errors.InputError` naming the file, line and
field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from agenteval._util.nanos import checked_ns, ns_of
from agenteval._util.untrusted import MAX_DEPTH, TooDeep, clean_text, clean_value
from agenteval.traces.records import BadSpan, SpanEvent, SpanRecord

__all__ = ["BadSpan", "is_openinference", "spans_of"]

_STATUS = {"OK": "ok", "ERROR": "error", "UNSET": "unset"}
_HEX = frozenset("0123456789abcdef")


def is_openinference(doc: Any) -> bool:
    """True for an OpenInference span, a list of them, or a REST page of them."""
    if isinstance(doc, Mapping) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if isinstance(doc, list):
        return bool(doc) and all(is_openinference(s) for s in doc[:1])
    return isinstance(doc, Mapping) and isinstance(doc.get("context"), Mapping)


def _id(v: Any, size: int, path: str) -> str | None:
    """Lowercase hex; missing, "" or all zeros → None (the span is skipped and counted)."""
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        raise BadSpan(path, "must be a hex string")
    h = v.lower().removeprefix("0x")
    if len(h) != 2 * size or not _HEX.issuperset(h):
        raise BadSpan(path, f"must be {2 * size} hex digits")
    return h if h.strip("0") else None


def _time(v: Any, path: str) -> int | None:
    if v is None or v == "":
        return None
    try:
        if isinstance(v, int) and not isinstance(v, bool):
            return checked_ns(v)
        if not isinstance(v, str):
            raise BadSpan(path, "must be an ISO 8601 time")
        try:
            t = datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            raise BadSpan(path, "must be an ISO 8601 time") from None
        return ns_of(t if t.tzinfo is not None else t.replace(tzinfo=UTC))
    except ValueError as e:  # out of range
        raise BadSpan(path, str(e)) from None


def _flatten(value: Any, prefix: str, out: dict[str, Any], path: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise BadSpan(path, f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        for k, v in value.items():
            key = clean_text(str(k))
            _flatten(v, f"{prefix}.{key}" if prefix else key, out, path, depth + 1)
    elif isinstance(value, list) and value and all(isinstance(x, Mapping) for x in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", out, path, depth + 1)
    else:
        try:
            out[prefix] = clean_value(value, depth)
        except TooDeep as e:
            raise BadSpan(path, str(e)) from None


def _attributes(v: Any, path: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise BadSpan(path, "must be an object")
    out: dict[str, Any] = {}
    _flatten(v, "", out, path)
    return out


def span_record(s: Any, path: str = "") -> SpanRecord:
    """One OpenInference span object as a :class:`SpanRecord`."""
    if not isinstance(s, Mapping):
        raise BadSpan(path, "a span object is expected")
    p = f"{path}." if path else ""
    ctx = s.get("context")
    if not isinstance(ctx, Mapping):
        raise BadSpan(f"{p}context", "must be an object with trace_id and span_id")
    attrs = _attributes(s.get("attributes"), f"{p}attributes")
    kind = s.get("span_kind")
    if isinstance(kind, str) and kind and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = clean_text(kind)
    events = []
    raw_events = s.get("events") or []
    if not isinstance(raw_events, list):
        raise BadSpan(f"{p}events", "must be a list")
    for i, e in enumerate(raw_events):
        ep = f"{p}events[{i}]"
        if not isinstance(e, Mapping):
            raise BadSpan(ep, "must be an object")
        events.append(
            SpanEvent(
                clean_text(str(e.get("name", ""))),
                _attributes(e.get("attributes"), f"{ep}.attributes"),
                _time(e.get("timestamp"), f"{ep}.timestamp"),
            )
        )
    code = s.get("status_code") or "UNSET"
    status = _STATUS.get(str(code).upper().removeprefix("STATUS_CODE_"))
    if status is None:
        raise BadSpan(f"{p}status_code", "must be OK, ERROR or UNSET")
    name = s.get("name", "")
    message = s.get("status_message") or None
    return SpanRecord(
        name=clean_text(name if isinstance(name, str) else str(name)),
        span_id=_id(ctx.get("span_id"), 8, f"{p}context.span_id") or "",
        trace_id=_id(ctx.get("trace_id"), 16, f"{p}context.trace_id") or "",
        parent_id=_id(s.get("parent_id"), 8, f"{p}parent_id"),
        start_ns=_time(s.get("start_time"), f"{p}start_time"),
        end_ns=_time(s.get("end_time"), f"{p}end_time"),
        attributes=attrs,
        events=tuple(events),
        status=status,
        status_message=clean_text(message) if isinstance(message, str) else None,
    )


def spans_of(doc: Any) -> Iterator[SpanRecord]:
    """The spans of one parsed document: a span, a list of spans, or a REST page."""
    if isinstance(doc, Mapping) and isinstance(doc.get("data"), list):
        for i, s in enumerate(doc["data"]):
            yield span_record(s, f"data[{i}]")
    elif isinstance(doc, list):
        for i, s in enumerate(doc):
            yield span_record(s, f"[{i}]")
    else:
        yield span_record(doc)
