"""The monitor's HTTP side: OTLP/HTTP ``/v1/traces`` and ``/v1/logs``, and ``/metrics``.

The request contract is the OTLP receiver's (:mod:`agenteval.traces.receiver`): protobuf
(``application/x-protobuf``) or OTLP/JSON, optionally gzip/deflate/zstd-compressed
(:mod:`agenteval.traces.bodies`), at most ``max_body`` bytes once decompressed; the Host
check against DNS rebinding when bound to a loopback address (:mod:`agenteval._util.hosts`).
The answers:

- **200** (an empty ``Export*ServiceResponse`` in the request's encoding) only once the
  body is durable in the write-ahead log and its spans are in flight; spans without a
  trace id (:mod:`agenteval.monitor.pending`) are dropped and the response is a **partial
  success** (``partialSuccess.rejectedSpans``, as the OTLP specification has it), so
  the sender's own logs say so;
- **400** undecodable body, **413** too large, **415** content type or encoding not read,
  **421** a ``Host`` naming another server (as the receiver; one line logged for the first
  five, the rest counted);
- **429** with ``Retry-After`` when the spans in flight would exceed ``--max-pending-spans``
  (the memory bound); **503** with ``Retry-After`` when the write-ahead log is at
  ``--max-wal-bytes`` (the disk bound) or the disk refused the write (full, failing): the
  request is not acknowledged, and OTLP exporters retry both statuses.

A request that is not HTTP the server can parse (a control character in a header, a
bad chunk size, two ``Content-Length``) is answered 400 by aiohttp itself; it is told
as one line like any refusal (never aiohttp's traceback, which any client could print on
the monitor's terminal at will) and counted as ``requests_total{signal="http"}``.

``GET /metrics``: :mod:`agenteval.monitor.metrics`. ``GET /healthz``: ``ok``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Awaitable, Callable
from functools import partial

from aiohttp import web

from agenteval._util.hosts import HostCheck
from agenteval._util.net import is_loopback, listen, request_error_log
from agenteval._util.say import Say, log_warning
from agenteval.errors import InputError
from agenteval.monitor.service import Monitor
from agenteval.monitor.wal import WalFull
from agenteval.traces.bodies import BodyError
from agenteval.traces.logs import LogRecord, decode_logs_body
from agenteval.traces.otlp import decode_body
from agenteval.traces.receiver import MAX_BODY, protobuf_available, read_otlp_body
from agenteval.traces.records import SpanRecord

__all__ = ["MonitorServer", "bind"]

RETRY_AFTER_S = 1
"""The ``Retry-After`` of a 429 or 503 (seconds)."""
METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text format's content type."""
_JSON = "application/json"
_PROTOBUF_TYPE = "application/x-protobuf"
_NO_TRACE_ID = "spans without a trace id (missing or all zeros) cannot be joined to a trace"
_LOGGED = 5


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free one); InputError naming the field ``listen``."""
    return listen(host, port, field="listen", backlog=512)


class MonitorServer:
    """Serves one :class:`~agenteval.monitor.service.Monitor` (module docstring)."""

    def __init__(
        self,
        monitor: Monitor,
        sock: socket.socket,
        *,
        allow_hosts: tuple[str, ...] = (),
        max_body: int = MAX_BODY,
        log: Say = log_warning,
    ) -> None:
        self.monitor = monitor
        self._sock = sock
        host = sock.getsockname()[0]
        self.host = host
        self.port = int(sock.getsockname()[1])
        self._hosts = HostCheck(host, allow_hosts) if is_loopback(host) else None
        self.max_body = max_body
        self._log = log
        self._protobuf = protobuf_available()
        self._refused = 0
        self._full_logged = False
        self._runner: web.AppRunner | None = None

    @property
    def endpoint(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        app = web.Application(client_max_size=self.max_body)
        app.router.add_post("/v1/traces", self._traces)
        app.router.add_post("/v1/logs", self._logs)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._health)
        # the one reader of aiohttp's request errors (the receiver's, the viewer's, the
        # proxy's): each told as a refusal line, never aiohttp's traceback
        errors = request_error_log(
            "agenteval.monitor.http", lambda status, line: self._refuse("http", status, line)
        )
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            auto_decompress=False,
            shutdown_timeout=1.0,
            logger=errors,
        )
        await runner.setup()
        await web.SockSite(runner, self._sock).start()
        self._runner = runner

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._sock.close()

    def _refuse(self, signal: str, status: int, message: str) -> web.Response:
        self.monitor.metrics.request(signal, status)
        self._refused += 1
        if self._refused <= _LOGGED:
            more = " (further refusals are only counted)" if self._refused == _LOGGED else ""
            self._log(f"agenteval monitor: HTTP {status}: {message}{more}")
        return web.Response(status=status, text=message + "\n")

    def _busy(self, signal: str, status: int, message: str) -> web.Response:
        self.monitor.metrics.request(signal, status)
        return web.Response(
            status=status, text=message + "\n", headers={"Retry-After": str(RETRY_AFTER_S)}
        )

    def _host_refusal(self, request: web.Request, signal: str) -> web.Response | None:
        host = request.headers.get("Host")
        if self._hosts is not None and not self._hosts.allows(host):
            return self._refuse(signal, 421, self._hosts.refusal(host or ""))
        return None

    async def _body(self, request: web.Request, signal: str) -> tuple[bool, bytes] | web.Response:
        try:
            ctype, body = await read_otlp_body(
                request, hosts=self._hosts, protobuf=self._protobuf, max_body=self.max_body
            )
        except BodyError as e:
            return self._refuse(signal, e.status, e.message)
        return ctype == _JSON, body

    def _ok(self, signal: str, json_body: bool, rejected: int = 0) -> web.Response:
        self.monitor.metrics.request(signal, 200)
        if not rejected:
            body = b"{}" if json_body else b""
        elif json_body:
            part = {"rejectedSpans": str(rejected), "errorMessage": _NO_TRACE_ID}
            body = json.dumps({"partialSuccess": part}).encode()
        else:
            from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as pb

            body = pb.ExportTraceServiceResponse(
                partial_success=pb.ExportTracePartialSuccess(
                    rejected_spans=rejected, error_message=_NO_TRACE_ID
                )
            ).SerializeToString()
        return web.Response(body=body, content_type=_JSON if json_body else _PROTOBUF_TYPE)

    def _wal_refusal(self, signal: str, e: WalFull) -> web.Response:
        if e.disk and not self._full_logged:
            self._full_logged = True
            self._log(f"agenteval monitor: {e} (not acknowledging until a write succeeds)")
        return self._busy(signal, 503, str(e))

    async def _traces(self, request: web.Request) -> web.Response:
        return await self._ingest(request, "traces")

    async def _logs(self, request: web.Request) -> web.Response:
        return await self._ingest(request, "logs")

    async def _ingest(self, request: web.Request, signal: str) -> web.Response:
        """``/v1/traces`` and ``/v1/logs``: read, decode, bound, log, acknowledge. Spans
        without a trace id are rejected (a partial success); log records without one are
        dropped quietly (nothing to join), as ``import-traces`` drops them."""
        got = await self._body(request, signal)
        if isinstance(got, web.Response):
            return got
        json_body, body = got
        ctype = _JSON if json_body else "application/x-protobuf"
        traces = signal == "traces"
        what = "OTLP" if traces else "OTLP logs"
        items: list[SpanRecord] | list[LogRecord]
        ingest: Callable[[], Awaitable[None]]
        try:
            if traces:
                spans = items = decode_body(body, ctype, f"{what} request body")
                ingest = partial(self.monitor.ingest_spans, body, json_body, spans)
            else:
                records = items = decode_logs_body(body, ctype, f"{what} request body")
                ingest = partial(self.monitor.ingest_logs, body, json_body, records)
        except InputError as e:
            return self._refuse(signal, 400, str(e))
        except (ValueError, RecursionError) as e:
            return self._refuse(signal, 400, f"{what} body cannot be read ({type(e).__name__})")
        missing = sum(1 for x in items if not x.trace_id)
        rejected = missing if traces else 0
        if missing == len(items):  # nothing to keep: nothing logged
            self.monitor.metrics.rejected_spans += rejected
            return self._ok(signal, json_body, rejected)
        if self.monitor.over_memory(len(items)):
            return self._busy(
                signal, 429, f"over {self.monitor.config.max_pending_spans} spans in flight"
            )
        try:
            await ingest()
        except WalFull as e:
            return self._wal_refusal(signal, e)
        self._full_logged = False
        return self._ok(signal, json_body, rejected)

    async def _metrics(self, request: web.Request) -> web.Response:
        refused = self._host_refusal(request, "metrics")
        if refused is not None:
            return refused
        return web.Response(
            body=self.monitor.metrics.render().encode(),
            headers={"Content-Type": METRICS_TYPE, "X-Content-Type-Options": "nosniff"},
        )

    async def _health(self, request: web.Request) -> web.Response:
        refused = self._host_refusal(request, "healthz")
        return refused if refused is not None else web.Response(text="ok\n")
