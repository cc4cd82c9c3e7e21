"""OTLP trace payloads → :class:`SpanRecord` values (the input of the span mapping).

One decoder for everything that arrives as OTLP: a receiver's ``/v1/traces`` request
body, a Collector file-exporter line, a saved ``ExportTraceServiceRequest``.

- **JSON** (``application/json``): the OTLP/JSON encoding — ``resourceSpans`` →
  ``scopeSpans`` (or the older ``instrumentationLibrarySpans``) → ``spans``; keys in
  lowerCamelCase or snake_case. Trace and span ids may be **hex** (what the OTLP/JSON
  spec says) or **base64** (what a generic protobuf-to-JSON mapping writes); a 32/16-char
  hex id is read as hex, anything else as base64. Times are integers or decimal strings
  of nanoseconds. ``status.code`` is the number (0/1/2) or the enum name
  (``STATUS_CODE_ERROR``).
- **Protobuf** (``application/x-protobuf``): a serialized ``ExportTraceServiceRequest``;
  needs ``opentelemetry-proto`` (extra ``otel``).

Attribute values become plain Python: strings, bools, ints, floats, lists (arrays),
dicts (key-value lists) and ``bytes``. Resource attributes are kept on each span
(``SpanRecord.resource``), so ``service.name`` survives.

Malformed input raises :class:`~agenteval.errors.InputError` naming where (the
``where`` argument: a file and line, or "request body") and the field path, e.g.
``traces.jsonl:3: field 'resourceSpans[0].scopeSpans[1].spans[4].spanId': not a hex or
base64 id``.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

from agenteval._util.untrusted import clean_text
from agenteval.errors import InputError
from agenteval.traces.otlp_plain import NotPlain, plain_span
from agenteval.traces.otlp_values import (
    attributes,
    decode_id,
    is_json,
    nanos,
    parse_json,
    pb_attrs,
    pb_id,
    pick,
)
from agenteval.traces.records import BadSpan, SpanEvent, SpanRecord

__all__ = ["decode_body", "decode_json", "decode_protobuf", "iter_protobuf", "request_to_json"]

_STATUS = {0: "unset", 1: "ok", 2: "error"}
_STATUS_NAMES = {
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
}


def _status(st: Any, path: str) -> tuple[str, str | None]:
    if st is None:
        return "unset", None
    if not isinstance(st, Mapping):
        raise BadSpan(path, "must be an object")
    code = st.get("code", 0)
    if isinstance(code, str) and code in _STATUS_NAMES:
        status = _STATUS_NAMES[code]
    elif isinstance(code, int) and not isinstance(code, bool) and code in _STATUS:
        status = _STATUS[code]
    else:
        raise BadSpan(f"{path}.code", "must be 0, 1, 2 or a STATUS_CODE_* name")
    message = st.get("message") or None
    return status, clean_text(message) if isinstance(message, str) else None


def _span(s: Any, path: str, resource: Mapping[str, Any]) -> SpanRecord:
    if not isinstance(s, Mapping):
        raise BadSpan(path, "must be an object")
    name = s.get("name", "")
    if not isinstance(name, str):
        raise BadSpan(f"{path}.name", "must be a string")
    events = []
    raw_events = s.get("events") or []
    if not isinstance(raw_events, list):
        raise BadSpan(f"{path}.events", "must be a list")
    for i, e in enumerate(raw_events):
        ep = f"{path}.events[{i}]"
        if not isinstance(e, Mapping):
            raise BadSpan(ep, "must be an object")
        ename = e.get("name", "")
        events.append(
            SpanEvent(
                clean_text(ename) if isinstance(ename, str) else str(ename),
                attributes(e.get("attributes"), f"{ep}.attributes"),
                nanos(pick(e, "timeUnixNano", "time_unix_nano"), f"{ep}.timeUnixNano"),
            )
        )
    status, message = _status(s.get("status"), f"{path}.status")
    return SpanRecord(
        name=clean_text(name),
        span_id=decode_id(pick(s, "spanId", "span_id"), 8, f"{path}.spanId") or "",
        trace_id=decode_id(pick(s, "traceId", "trace_id"), 16, f"{path}.traceId") or "",
        parent_id=decode_id(pick(s, "parentSpanId", "parent_span_id"), 8, f"{path}.parentSpanId"),
        start_ns=nanos(
            pick(s, "startTimeUnixNano", "start_time_unix_nano"), f"{path}.startTimeUnixNano"
        ),
        end_ns=nanos(pick(s, "endTimeUnixNano", "end_time_unix_nano"), f"{path}.endTimeUnixNano"),
        attributes=attributes(s.get("attributes"), f"{path}.attributes"),
        events=tuple(events),
        status=status,
        status_message=message,
        resource=resource,
    )


def _walk_json(doc: Any) -> Iterator[SpanRecord]:
    if not isinstance(doc, Mapping):
        raise BadSpan("", "an OTLP ExportTraceServiceRequest object is expected")
    rss = pick(doc, "resourceSpans", "resource_spans")
    if rss is None:
        raise BadSpan("resourceSpans", "missing (not an OTLP trace export)")
    if not isinstance(rss, list):
        raise BadSpan("resourceSpans", "must be a list")
    for i, rs in enumerate(rss):
        rp = f"resourceSpans[{i}]"
        if not isinstance(rs, Mapping):
            raise BadSpan(rp, "must be an object")
        res = rs.get("resource") or {}
        if not isinstance(res, Mapping):
            raise BadSpan(f"{rp}.resource", "must be an object")
        resource = attributes(res.get("attributes"), f"{rp}.resource.attributes")
        scopes = pick(rs, "scopeSpans", "scope_spans")
        key = "scopeSpans"
        if scopes is None:
            scopes = pick(rs, "instrumentationLibrarySpans", "instrumentation_library_spans")
            key = "instrumentationLibrarySpans"
        if not isinstance(scopes or [], list):
            raise BadSpan(f"{rp}.{key}", "must be a list")
        for j, ss in enumerate(scopes or []):
            sp = f"{rp}.{key}[{j}]"
            spans = ss.get("spans") if isinstance(ss, Mapping) else None
            if not isinstance(spans or [], list):
                raise BadSpan(f"{sp}.spans", "must be a list")
            for k, s in enumerate(spans or []):
                try:
                    span = plain_span(s, resource)
                except NotPlain:  # the checked decoder reads it, or words what is wrong
                    span = _span(s, f"{sp}.spans[{k}]", resource)
                yield span


def decode_json(doc: Any, where: str = "request body") -> list[SpanRecord]:
    """The spans of one parsed OTLP/JSON ``ExportTraceServiceRequest``."""
    try:
        return list(_walk_json(doc))
    except BadSpan as e:
        raise InputError(e.message, file=where, field=e.path or None) from None
    except RecursionError:
        raise InputError("nested too deeply", file=where) from None


def decode_protobuf(data: bytes, where: str = "request body") -> list[SpanRecord]:
    """The spans of one serialized protobuf ``ExportTraceServiceRequest``."""
    return list(iter_protobuf(data, where))


def iter_protobuf(data: bytes, where: str = "request body") -> Iterator[SpanRecord]:
    """:func:`decode_protobuf`, one span at a time: the request is parsed at once (upb, in
    C), the spans are made as they are taken, so only the parsed request and one span are
    in memory (``import-traces`` spools them as they come). A malformed request raises
    before the first span; an id of the wrong size when that span is reached."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise InputError(
            "reading OTLP protobuf needs opentelemetry-proto: pip install -e '.[otel]'",
            file=where,
        ) from None
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(data)
    except DecodeError as e:
        raise InputError(
            f"not an OTLP protobuf ExportTraceServiceRequest ({e})", file=where
        ) from None
    return _pb_spans(req, where)


def _pb_spans(req: Any, where: str) -> Iterator[SpanRecord]:
    status_of = _STATUS.get
    for i, rs in enumerate(req.resource_spans):
        resource = pb_attrs(rs.resource.attributes)
        for j, ss in enumerate(rs.scope_spans):
            for k, s in enumerate(ss.spans):
                trace_id, span_id = s.trace_id, s.span_id
                if (trace_id and len(trace_id) != 16) or (span_id and len(span_id) != 8):
                    _bad_pb_id(
                        trace_id, span_id, f"resource_spans[{i}].scope_spans[{j}].spans[{k}]", where
                    )
                parent = s.parent_span_id
                st = s.status
                events = s.events
                yield SpanRecord(
                    s.name,
                    pb_id(span_id),
                    pb_id(trace_id),
                    parent.hex() if parent.strip(b"\0") else None,
                    s.start_time_unix_nano or None,
                    s.end_time_unix_nano or None,
                    pb_attrs(s.attributes),
                    tuple(
                        SpanEvent(e.name, pb_attrs(e.attributes), e.time_unix_nano or None)
                        for e in events
                    )
                    if events
                    else (),
                    status_of(st.code, "unset"),
                    st.message or None,
                    resource,
                )


def _bad_pb_id(trace_id: bytes, span_id: bytes, path: str, where: str) -> None:
    for name, value, size in (("trace_id", trace_id, 16), ("span_id", span_id, 8)):
        if value and len(value) != size:  # none or all zeros: skipped, counted
            raise InputError(
                f"a {size}-byte id is expected, got {len(value)} bytes",
                file=where,
                field=f"{path}.{name}",
            )


_ID_KEYS = frozenset(("traceId", "spanId", "parentSpanId"))


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def request_to_json(request: Any) -> dict[str, Any]:
    """A protobuf ``ExportTraceServiceRequest`` as an OTLP/JSON object: the protobuf JSON
    mapping (lowerCamelCase keys, 64-bit integers as decimal strings, enums as numbers)
    with trace and span ids as lowercase hex, as the OTLP/JSON spec and the Collector's
    file exporter write them. :func:`decode_json` reads it back."""
    from google.protobuf.json_format import MessageToDict

    doc = MessageToDict(request, use_integers_for_enums=True)
    out: dict[str, Any] = _hex_ids(doc)
    return out


def decode_body(body: bytes, content_type: str, where: str = "request body") -> list[SpanRecord]:
    """The spans of an OTLP/HTTP ``/v1/traces`` request body, by its content type
    (``application/json``, else protobuf)."""
    if is_json(content_type):
        return decode_json(parse_json(body, where), where)
    return decode_protobuf(body, where)
