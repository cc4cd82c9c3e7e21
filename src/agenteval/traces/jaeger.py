"""Jaeger JSON → :class:`SpanRecord`: the UI's "Download JSON" and the query API's format.

Jaeger's UI exports, and its query API (``/api/traces``, ``/api/traces/{id}``) returns::

    {"data": [{"traceID": <hex>, "processes": {"p1": {"serviceName", "tags": [...]}},
               "spans": [{"traceID", "spanID", "operationName",
                          "references": [{"refType": "CHILD_OF", "traceID", "spanID"}],
                          "startTime": <µs>, "duration": <µs>, "processID": "p1",
                          "tags": [{"key", "type", "value"}],
                          "logs": [{"timestamp": <µs>, "fields": [{"key", "type", "value"}]}]}]}]}

A file may hold that object, its ``data`` list, or one trace object. Tags become
attributes (``string``, ``bool``, ``int64``, ``float64`` values as they are); the OTel
status is read from ``otel.status_code`` / ``otel.status_description`` (or the ``error``
tag); each log is an event named by its ``event`` field (its other fields its
attributes); the process's ``serviceName`` and tags are the resource. The parent is the
first ``CHILD_OF`` reference (else the first reference). The query API v3 (``/api/v3``)
answers OTLP/JSON under ``result``: that is read as OTLP.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agenteval.traces.records import BadSpan, SpanEvent, SpanRecord

__all__ = ["is_jaeger", "jaeger_spans"]

_HEX = frozenset("0123456789abcdef")


def _traces(doc: Any) -> list[Any] | None:
    if isinstance(doc, Mapping) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if isinstance(doc, Mapping):
        doc = [doc]
    if isinstance(doc, list) and doc and all(isinstance(t, Mapping) for t in doc[:1]):
        first = doc[0]
        if "traceID" in first and isinstance(first.get("spans"), list):
            return doc
    return None


def is_jaeger(doc: Any) -> bool:
    """True for a Jaeger JSON export (module docstring)."""
    return _traces(doc) is not None


def _id(v: Any, size: int, path: str) -> str:
    if not isinstance(v, str) or not v:
        raise BadSpan(path, "must be a hex id")
    h = v.lower().rjust(2 * size, "0")  # Jaeger drops leading zeros
    if len(h) != 2 * size or not _HEX.issuperset(h):
        raise BadSpan(path, f"must be at most {2 * size} hex digits")
    return h


def _kv(items: Any, path: str) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise BadSpan(path, "must be a list of {key, type, value}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise BadSpan(f"{path}[{i}]", "must be {key, type, value} with a string key")
        out[kv["key"]] = kv.get("value")
    return out


def _micros(v: Any, path: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise BadSpan(path, "must be a number of microseconds")
    return int(v) * 1000


def _span(s: Any, path: str, processes: Mapping[str, Any]) -> SpanRecord:
    if not isinstance(s, Mapping):
        raise BadSpan(path, "must be an object")
    tags = _kv(s.get("tags"), f"{path}.tags")
    refs = s.get("references") or []
    parent = None
    if isinstance(refs, list) and refs:
        child = [r for r in refs if isinstance(r, Mapping) and r.get("refType") == "CHILD_OF"]
        ref = child[0] if child else refs[0]
        if isinstance(ref, Mapping) and ref.get("spanID"):
            parent = _id(ref["spanID"], 8, f"{path}.references[0].spanID")
    start = _micros(s.get("startTime"), f"{path}.startTime")
    dur = _micros(s.get("duration"), f"{path}.duration")
    events = []
    for i, log in enumerate(s.get("logs") or []):
        fields = _kv(log.get("fields") if isinstance(log, Mapping) else None, f"{path}.logs[{i}]")
        name = str(fields.pop("event", "") or "")
        when = _micros(log.get("timestamp"), f"{path}.logs[{i}].timestamp")
        events.append(SpanEvent(name, fields, when))
    code = str(tags.get("otel.status_code", "")).upper()
    status = {"ERROR": "error", "OK": "ok"}.get(code, "unset")
    if tags.get("error") in (True, "true") and status == "unset":
        status = "error"
    message = tags.get("otel.status_description")
    proc = processes.get(str(s.get("processID", "")))
    resource: dict[str, Any] = {}
    if isinstance(proc, Mapping):
        resource = _kv(proc.get("tags"), f"{path}.process.tags")
        if isinstance(proc.get("serviceName"), str):
            resource["service.name"] = proc["serviceName"]
    return SpanRecord(
        name=str(s.get("operationName", "")),
        span_id=_id(s.get("spanID"), 8, f"{path}.spanID"),
        trace_id=_id(s.get("traceID"), 16, f"{path}.traceID"),
        parent_id=parent,
        start_ns=start,
        end_ns=None if start is None or dur is None else start + dur,
        attributes=tags,
        events=tuple(events),
        status=status,
        status_message=message if isinstance(message, str) else None,
        resource=resource,
    )


def jaeger_spans(doc: Any) -> Iterator[SpanRecord]:
    """Every span of a Jaeger JSON document (module docstring)."""
    traces = _traces(doc) or []
    for i, t in enumerate(traces):
        if not isinstance(t, Mapping):
            raise BadSpan(f"data[{i}]", "must be a trace object")
        raw = t.get("processes")
        procs: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        spans = t.get("spans")
        if not isinstance(spans, list):
            raise BadSpan(f"data[{i}].spans", "must be a list")
        for j, s in enumerate(spans):
            yield _span(s, f"data[{i}].spans[{j}]", procs)
