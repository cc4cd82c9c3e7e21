"""The OTLP receiver's ``/v1/logs`` route: log records joined to their trial's spans.

An exporter configured with the receiver's endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT``)
sends the Logs signal to ``/v1/logs`` beside the spans to ``/v1/traces``. Each record of
an open trial's trace is kept in that trial's box
(:attr:`~agenteval.traces.receiver.TraceBox.logs`); when the trial settles, the records
join their spans by span id (:func:`agenteval.traces.logs.attach`), so content an
instrumentation emits as log records (openai-v2's event mode) is read like span content.
Records of other traces, or without a trace id, are dropped. The body is refused like a
trace body (the receiver's Host, content-type, size and encoding checks): unsupported
content type or encoding (415), over the size limit (413), undecodable (400).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from aiohttp import web

from agenteval.traces.logs import LogRecord, decode_logs_body

__all__ = ["logs_handler"]


class _Box(Protocol):
    def add_log(self, record: LogRecord) -> None: ...


class _Receiver(Protocol):
    """What the handler needs of :class:`~agenteval.traces.receiver.OtlpReceiver`."""

    def box_of(self, trace_id: str) -> _Box | None: ...

    async def decoded(
        self,
        request: web.Request,
        decode: Callable[[bytes, str, str], list[LogRecord]],
        where: str,
        what: str,
    ) -> tuple[str, list[LogRecord]] | web.Response: ...

    def accepted(self, content_type: str) -> web.Response: ...


def logs_handler(receiver: _Receiver) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The aiohttp handler of ``POST /v1/logs`` for ``receiver`` (module docstring)."""

    async def handle(request: web.Request) -> web.Response:
        got = await receiver.decoded(  # Host, type, size, encoding; then the records
            request, decode_logs_body, "OTLP logs request body", "OTLP logs body"
        )
        if isinstance(got, web.Response):
            return got
        ctype, records = got
        for r in records:
            box = receiver.box_of(r.trace_id or "")
            if box is not None:
                box.add_log(r)
        return receiver.accepted(ctype)

    return handle
