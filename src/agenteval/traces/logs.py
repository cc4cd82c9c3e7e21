"""The OTel Logs signal: GenAI content in log records, joined to the spans by id.

Instrumentations in "event" mode (``opentelemetry-instrumentation-openai-v2`` by
default; ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY`` with the
latest GenAI conventions) put the messages in **log records**, not on the spans: one
per message (``gen_ai.user.message``, ``gen_ai.choice``...) or one
``gen_ai.client.inference.operation.details`` per call. Each record carries the trace and
span id of the span that was current when it was emitted.

:class:`LogRecord` is one record as plain data; :func:`attach` puts every record whose
span is among the spans given on that span, as a
:class:`~agenteval.traces.records.SpanEvent` (name: the record's event name, body and
attributes as recorded), where :mod:`agenteval.traces.conventions` reads it like a span
event. A record without a span id, or whose span is not given, is left out.

Decoders: :func:`decode_logs_json` (OTLP/JSON ``ExportLogsServiceRequest``:
``resourceLogs`` → ``scopeLogs`` → ``logRecords``, camelCase or snake_case, hex or
base64 ids) and :func:`decode_logs_protobuf`; malformed input raises
:class:`~agenteval.errors.InputError` naming the field. The event name is the record's
``eventName``, else its ``event.name`` attribute.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agenteval.errors import InputError
from agenteval.traces import otlp_values as ov
from agenteval.traces.records import BadSpan, SpanEvent, SpanRecord

__all__ = [
    "LogRecord",
    "attach",
    "decode_logs_body",
    "decode_logs_json",
    "decode_logs_protobuf",
    "is_logs_doc",
    "plain",
]


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One OTel log record: ``name`` its event name ("" when it has none)."""

    name: str
    trace_id: str | None = None
    span_id: str | None = None
    time_ns: int | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None


def plain(v: Any) -> Any:
    """A value with tuples as lists and mappings as dicts, all the way down (the SDK
    keeps log attributes as read-only tuples and mappings)."""
    if isinstance(v, list | tuple):
        return [plain(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    return v


def attach(spans: Iterable[SpanRecord], logs: Iterable[LogRecord]) -> list[SpanRecord]:
    """``spans`` with each log record of theirs added as an event (module docstring)."""
    by_span: dict[str, list[LogRecord]] = {}
    for r in logs:
        if r.span_id:
            by_span.setdefault(r.span_id, []).append(r)
    out = []
    for s in spans:
        mine = by_span.get(s.span_id)
        if mine:
            mine = [r for r in mine if not r.trace_id or not s.trace_id or r.trace_id == s.trace_id]
        if not mine:
            out.append(s)
            continue
        events = [SpanEvent(r.name, r.attributes, r.time_ns, r.body) for r in mine]
        out.append(replace(s, events=(*s.events, *events)))
    return out


def is_logs_doc(doc: Any) -> bool:
    """True for an OTLP/JSON ``ExportLogsServiceRequest``."""
    return isinstance(doc, Mapping) and ov.pick(doc, "resourceLogs", "resource_logs") is not None


def _record(r: Any, path: str) -> LogRecord:
    if not isinstance(r, Mapping):
        raise BadSpan(path, "must be an object")
    attrs = ov.attributes(r.get("attributes"), f"{path}.attributes")
    body = r.get("body")
    value = ov.any_value(body, f"{path}.body") if body is not None else None
    name = ov.pick(r, "eventName", "event_name") or attrs.get("event.name") or ""
    t = ov.nanos(ov.pick(r, "timeUnixNano", "time_unix_nano"), f"{path}.timeUnixNano")
    if t is None:
        t = ov.nanos(
            ov.pick(r, "observedTimeUnixNano", "observed_time_unix_nano"),
            f"{path}.observedTimeUnixNano",
        )
    return LogRecord(
        name=str(name),
        trace_id=ov.decode_id(ov.pick(r, "traceId", "trace_id"), 16, f"{path}.traceId"),
        span_id=ov.decode_id(ov.pick(r, "spanId", "span_id"), 8, f"{path}.spanId"),
        time_ns=t,
        attributes=attrs,
        body=value,
    )


def _walk(doc: Any) -> Iterator[LogRecord]:
    if not is_logs_doc(doc):
        raise BadSpan("resourceLogs", "missing (not an OTLP logs export)")
    rls = ov.pick(doc, "resourceLogs", "resource_logs")
    if not isinstance(rls, list):
        raise BadSpan("resourceLogs", "must be a list")
    for i, rl in enumerate(rls):
        rp = f"resourceLogs[{i}]"
        if not isinstance(rl, Mapping):
            raise BadSpan(rp, "must be an object")
        scopes = ov.pick(rl, "scopeLogs", "scope_logs") or []
        if not isinstance(scopes, list):
            raise BadSpan(f"{rp}.scopeLogs", "must be a list")
        for j, sl in enumerate(scopes):
            recs = ov.pick(sl, "logRecords", "log_records") if isinstance(sl, Mapping) else None
            if not isinstance(recs or [], list):
                raise BadSpan(f"{rp}.scopeLogs[{j}].logRecords", "must be a list")
            for k, r in enumerate(recs or []):
                yield _record(r, f"{rp}.scopeLogs[{j}].logRecords[{k}]")


def decode_logs_json(doc: Any, where: str = "request body") -> list[LogRecord]:
    """The records of one parsed OTLP/JSON ``ExportLogsServiceRequest``."""
    try:
        return list(_walk(doc))
    except BadSpan as e:
        raise InputError(e.message, file=where, field=e.path or None) from None


def decode_logs_protobuf(data: bytes, where: str = "request body") -> list[LogRecord]:
    """The records of one serialized protobuf ``ExportLogsServiceRequest``."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )
    except ImportError:
        raise InputError(
            "OTLP protobuf needs opentelemetry-proto: pip install 'agenteval[otel]'",
            file=where,
        ) from None
    req = ExportLogsServiceRequest()
    try:
        req.ParseFromString(data)
    except (DecodeError, ValueError) as e:
        raise InputError(f"not an OTLP ExportLogsServiceRequest ({e})", file=where) from None
    out = []
    for rl in req.resource_logs:
        for sl in rl.scope_logs:
            for r in sl.log_records:
                attrs = ov.pb_attrs(r.attributes)
                name = getattr(r, "event_name", "") or attrs.get("event.name") or ""
                out.append(
                    LogRecord(
                        name=str(name),
                        trace_id=r.trace_id.hex() if any(r.trace_id) else None,
                        span_id=r.span_id.hex() if any(r.span_id) else None,
                        time_ns=r.time_unix_nano or r.observed_time_unix_nano or None,
                        attributes=attrs,
                        body=ov.pb_value(r.body) if r.HasField("body") else None,
                    )
                )
    return out


def decode_logs_body(
    body: bytes, content_type: str, where: str = "request body"
) -> list[LogRecord]:
    """The records of an OTLP/HTTP ``/v1/logs`` request body, by its content type."""
    if ov.is_json(content_type):
        return decode_logs_json(ov.parse_json(body, where), where)
    return decode_logs_protobuf(body, where)
