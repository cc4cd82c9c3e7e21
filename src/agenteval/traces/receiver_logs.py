"""The OTLP receiver's ``/v1/logs`` route: log records joined to their trial's spans.

An exporter configured with the receiver's endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT``)
sends the Logs signal to ``/v1/logs`` beside the spans to ``/v1/traces``. Each record of
an open trial's trace is kept in that trial's box
(:attr:`~agenteval.traces.receiver.TraceBox.logs`); when the trial settles, the records
join their spans by span id (:func:`agenteval.traces.logs.attach`), so content an
instrumentation emits as log records (openai-v2's event mode) is read like span content.
Records of other traces, or without a trace id, are dropped. The body is refused like a
trace body: unsupported content type (415), over the size limit (413), undecodable (400).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from aiohttp import web

from agenteval.errors import InputError
from agenteval.traces.logs import LogRecord, decode_logs_body

__all__ = ["logs_handler"]


class _Box(Protocol):
    def add_log(self, record: LogRecord) -> None: ...


class _Receiver(Protocol):
    """What the handler needs of :class:`~agenteval.traces.receiver.OtlpReceiver`."""

    stats: Any
    max_body: int

    @property
    def protobuf(self) -> bool: ...

    def box_of(self, trace_id: str) -> _Box | None: ...

    def _refuse(self, status: int, message: str) -> web.Response: ...


_JSON = "application/json"
_PROTOBUF = frozenset({"application/x-protobuf", "application/protobuf"})


def logs_handler(receiver: _Receiver) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The aiohttp handler of ``POST /v1/logs`` for ``receiver`` (module docstring)."""

    async def handle(request: web.Request) -> web.Response:
        receiver.stats.requests += 1
        ctype = request.content_type.lower()
        if ctype != _JSON and ctype not in _PROTOBUF:
            return receiver._refuse(415, f"unsupported content type {ctype!r}")
        if ctype in _PROTOBUF and not receiver.protobuf:
            return receiver._refuse(415, "OTLP protobuf needs opentelemetry-proto")
        length = request.content_length
        if length is not None and length > receiver.max_body:
            return receiver._refuse(413, f"body of {length} bytes is over {receiver.max_body}")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return receiver._refuse(413, f"body is over {receiver.max_body} bytes")
        try:
            records = decode_logs_body(body, ctype, "OTLP logs request body")
        except InputError as e:
            return receiver._refuse(400, str(e))
        for r in records:
            box = receiver.box_of(r.trace_id or "")
            if box is not None:
                box.add_log(r)
        if ctype == _JSON:
            return web.Response(body=b"{}", content_type=_JSON)
        return web.Response(body=b"", content_type="application/x-protobuf")

    return handle
