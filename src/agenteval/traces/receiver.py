"""An OTLP/HTTP trace receiver for one run: spans routed to trials by trace id.

``agenteval run --otlp-receiver HOST:PORT`` (or ``auto``) listens at
``http://HOST:PORT/v1/traces`` for the whole run. Each trial's requests carry a fresh
W3C ``traceparent`` (:mod:`agenteval.llm.propagation`); an agent that continues that
trace and exports its spans over OTLP/HTTP has them attributed to that trial, and to no
other. The HTTP contract:

- ``POST /v1/traces`` with ``Content-Type: application/x-protobuf`` (also
  ``application/protobuf``; needs ``opentelemetry-proto``, extra ``otel``) or
  ``application/json`` (OTLP/JSON, hex or base64 ids), optionally gzip-, deflate- or
  zstd-compressed (``Content-Encoding``; zstd needs ``zstandard``, extra ``otel``; see
  :mod:`agenteval.traces.bodies`), decoded by :func:`agenteval.traces.otlp.decode_body`;
- **200** with an empty ``ExportTraceServiceResponse`` in the request's encoding
  (``{}``, or zero protobuf bytes);
- **400** for a body that does not decode (one line logged; the run goes on);
- **413** for a body over ``max_body`` bytes (after decompression; default 16 MiB);
- **415** for another content type, or protobuf when ``opentelemetry-proto`` is missing,
  or a content encoding not read (``br``...);
- **421** for a ``Host`` header naming another server (a DNS-rebinding page:
  :mod:`agenteval._util.hosts`; ``allow_hosts`` adds names), when the receiver listens on
  a loopback address. Bound to another address (``0.0.0.0``, for agents in containers
  that send to ``host.docker.internal``) it answers any ``Host``: it was exposed on
  purpose, and a browser cannot send it an OTLP body without a CORS preflight anyway.

Every refusal is one logged line (the first five) and counted in
:attr:`ReceiverStats.malformed`; no request makes a traceback or a 500.

Routing: a span whose trace id belongs to a trial in flight joins that trial
(:meth:`OtlpReceiver.expect`); a span of a trial already finished is **late**, any other
**unknown**; both are dropped and counted (:class:`ReceiverStats`).

Waiting (:meth:`TraceBox.settle`): after the agent answered, the trial waits for late
spans at most ``wait_s``, and less when the trace looks complete: once the agent's root
span (the child of the trial's own span id, or a span with no parent) has arrived and no
span arrived for ``quiet_s`` (0.1 s). An agent that exports before it answers (a
``SimpleSpanProcessor``, or ``force_flush()``) therefore costs no wait at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from aiohttp import web

from agenteval._util.hosts import HostCheck
from agenteval._util.net import is_loopback, listen, request_error_log
from agenteval._util.say import Say, log_warning
from agenteval.errors import FieldName, InputError, NamedText
from agenteval.llm.propagation import TraceContext
from agenteval.traces.bodies import BodyError, decode_content
from agenteval.traces.logs import LogRecord
from agenteval.traces.otlp import decode_body
from agenteval.traces.receiver_logs import logs_handler
from agenteval.traces.records import SpanRecord

__all__ = ["OtlpReceiver", "ReceiverStats", "TraceBox", "parse_address", "read_otlp_body"]

MAX_BODY = 16 * 1024 * 1024
"""The largest request body accepted (bytes, after decompression): larger ones get 413."""
QUIET_S = 0.1
"""Quiet period that ends the wait early once the trace's root span (a conversation: the
root of every turn's request) has arrived."""
_JSON = "application/json"
_Item = TypeVar("_Item")
_PROTOBUF = frozenset({"application/x-protobuf", "application/protobuf"})


async def read_otlp_body(
    request: web.Request, *, hosts: HostCheck | None, protobuf: bool, max_body: int
) -> tuple[str, bytes]:
    """An OTLP/HTTP request's content type and decompressed body (this receiver's and the
    monitor's: one set of checks): the ``Host`` (421 when ``hosts`` refuses it), the
    content type (415 unless OTLP JSON, or protobuf with ``protobuf`` readable), the size
    (413 over ``max_body``, declared or once decompressed) and the encoding
    (:func:`~agenteval.traces.bodies.decode_content`). A refusal is a
    :class:`~agenteval.traces.bodies.BodyError` with the status to answer."""
    host = request.headers.get("Host")
    if hosts is not None and not hosts.allows(host):
        raise BodyError(421, hosts.refusal(host or ""))
    ctype = request.content_type.lower()
    if ctype != _JSON and ctype not in _PROTOBUF:
        raise BodyError(
            415, f"unsupported content type {ctype!r}: send application/x-protobuf or json"
        )
    if ctype in _PROTOBUF and not protobuf:
        raise BodyError(
            415,
            "OTLP protobuf needs opentelemetry-proto (pip install -e '.[otel]');"
            " send application/json, or install it",
        )
    length = request.content_length
    if length is not None and length > max_body:
        raise BodyError(413, f"body of {length} bytes is over {max_body}")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise BodyError(413, f"body is over {max_body} bytes") from None
    return ctype, decode_content(body, request.headers.get("Content-Encoding", ""), max_body)


_LOGGED_BAD = 5  # malformed requests logged one line each; later ones only counted


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT``, ``[::1]:PORT`` or ``auto`` → (host, port); port 0 = any.

    A missing host is ``127.0.0.1``. Raises InputError naming the field ``otlp_receiver``.
    """
    if value == "auto":
        return "127.0.0.1", 0
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(
            (
                FieldName("otlp_receiver"),
                f" must be HOST:PORT (port 0-65535) or auto, got {value!r}",
            )
        )
    return host, int(port)


@dataclass(slots=True)
class ReceiverStats:
    """What the receiver saw during the run."""

    requests: int = 0
    spans: int = 0
    """Spans attributed to a trial."""
    unknown: int = 0
    """Spans of a trace no trial of this run owns: dropped."""
    late: int = 0
    """Spans of a trial that had already finished waiting: dropped."""
    malformed: int = 0
    """Requests answered 400, 413 or 415."""

    def line(self, wait_s: float) -> str:
        """One line for the end of the run (a :class:`~agenteval.errors.NamedText` naming
        the field ``otlp_wait``: the CLI shows its flag)."""
        return NamedText(
            f"agenteval: OTLP receiver: {self.spans} spans attributed to trials;"
            f" dropped {self.unknown} of unknown traces and {self.late} that arrived after"
            " their trial's wait (",
            FieldName("otlp_wait"),
            f" {wait_s:g}); {self.malformed} requests refused",
        )


@dataclass(slots=True)
class TraceBox:
    """The spans received for one trial's trace."""

    context: TraceContext
    spans: list[SpanRecord] = field(default_factory=list)
    root_seen: bool = False
    """Whether a root span arrived for every request sent in the trace (:attr:`requests`)."""
    last_arrival: float = 0.0
    requests: int = 1
    """Requests sent with the trace: a conversation sends one per turn, each the root of
    its own spans; the wait ends early only once the last one's root has arrived."""
    roots: int = 0
    logs: list[LogRecord] = field(default_factory=list)
    """The trace's OTel log records (``/v1/logs``, :mod:`agenteval.traces.receiver_logs`)."""
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def add_log(self, record: LogRecord) -> None:
        """Keep a log record of the trace."""
        self.logs.append(record)
        self.last_arrival = time.monotonic()
        self._arrived.set()

    def add(self, span: SpanRecord) -> None:
        """Keep ``span``; note when the trace's root spans arrive."""
        self.spans.append(span)
        if span.parent_id is None or span.parent_id == self.context.span_id:
            self.roots += 1
            self.root_seen = self.roots >= self.requests
        self.last_arrival = time.monotonic()
        self._arrived.set()

    def another_request(self) -> None:
        """One more request (a conversation's next turn) is sent with the trace."""
        self.requests += 1
        self.root_seen = self.roots >= self.requests

    async def settle(self, wait_s: float, quiet_s: float = QUIET_S) -> None:
        """Wait for late spans: at most ``wait_s``; done early once the root span has
        arrived and nothing arrived for ``quiet_s`` (module docstring)."""
        deadline = time.monotonic() + wait_s
        while True:
            now = time.monotonic()
            if now >= deadline:
                return
            until = deadline
            if self.root_seen:
                quiet_end = self.last_arrival + quiet_s
                if now >= quiet_end:
                    return
                until = min(until, quiet_end)
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), until - now)


def _bind(host: str, port: int) -> socket.socket:
    return listen(host, port, field="otlp_receiver")


def protobuf_available() -> bool:
    """True when ``opentelemetry-proto`` can be imported (protobuf request bodies)."""
    try:
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2  # noqa: F401
    except ImportError:
        return False
    return True


class OtlpReceiver:
    """The receiver (module docstring). The socket is bound when it is built — so a port
    in use is an InputError (exit 2) before the run starts — and served from
    :meth:`start` to :meth:`close` on the running event loop.

    ``log`` takes one line per event worth telling (a refused request); the default is a
    warning of the ``agenteval`` logger (:mod:`agenteval._util.say`; the command line
    passes its own, which prints the line on stderr).
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        max_body: int = MAX_BODY,
        log: Say = log_warning,
        allow_hosts: tuple[str, ...] = (),
    ) -> None:
        self._sock = _bind(host, port)
        bound = self._sock.getsockname()
        self.host = host
        self.port = int(bound[1])
        self.max_body = max_body
        self._hosts = HostCheck(host, allow_hosts) if is_loopback(host) else None
        self.stats = ReceiverStats()
        self._log = log
        self._protobuf = protobuf_available()
        self._open: dict[str, TraceBox] = {}
        self._finished: set[str] = set()
        self._runner: web.AppRunner | None = None

    @property
    def endpoint(self) -> str:
        """The base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes it (no ``/v1/traces``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def traces_url(self) -> str:
        """The URL spans are posted to: ``<endpoint>/v1/traces``."""
        return f"{self.endpoint}/v1/traces"

    @property
    def protobuf(self) -> bool:
        """Whether protobuf bodies can be decoded (else only OTLP/JSON)."""
        return self._protobuf

    async def start(self) -> None:
        """Serve on the bound socket (idempotent)."""
        if self._runner is not None:
            return
        app = web.Application(client_max_size=self.max_body)
        app.router.add_post("/v1/traces", self._handle)
        app.router.add_post("/v1/logs", logs_handler(self))
        # bodies are decompressed by _handle, within max_body (aiohttp's own decoder
        # logs a traceback for an encoding it cannot read); a client trickling a body
        # delays the run's end by 1 s at most
        # a request that is not HTTP aiohttp can read is counted and told in one line
        # like any refusal (never aiohttp's traceback on stderr)
        refused = request_error_log("agenteval.receiver", self._refuse)
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            auto_decompress=False,
            shutdown_timeout=1.0,
            logger=refused,
        )
        await runner.setup()
        await web.SockSite(runner, self._sock).start()
        self._runner = runner

    async def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._sock.close()

    def expect(self, context: TraceContext) -> TraceBox:
        """Start attributing the spans of ``context``'s trace to a new box."""
        box = TraceBox(context)
        self._open[context.trace_id] = box
        return box

    def box_of(self, trace_id: str) -> TraceBox | None:
        """The open box of ``trace_id``'s trial, if any."""
        return self._open.get(trace_id)

    def release(self, context: TraceContext) -> None:
        """The trial is done: later spans of its trace are counted as late."""
        if self._open.pop(context.trace_id, None) is not None:
            self._finished.add(context.trace_id)

    def _route(self, spans: list[SpanRecord]) -> None:
        for span in spans:
            box = self._open.get(span.trace_id)
            if box is not None:
                box.add(span)
                self.stats.spans += 1
            elif span.trace_id in self._finished:
                self.stats.late += 1
            else:
                self.stats.unknown += 1

    def _refuse(self, status: int, message: str) -> web.Response:
        self.stats.malformed += 1
        if self.stats.malformed <= _LOGGED_BAD:
            more = (
                " (further refusals are only counted)"
                if self.stats.malformed == _LOGGED_BAD
                else ""
            )
            self._log(f"agenteval: OTLP receiver: HTTP {status}: {message}{more}")
        return web.Response(status=status, text=message + "\n")

    async def checked_body(self, request: web.Request) -> tuple[str, bytes] | web.Response:
        """A request's content type and decompressed body, its Host, type, size and
        encoding checked (the same for ``/v1/traces`` and ``/v1/logs``); else the refusal."""
        self.stats.requests += 1
        try:
            return await read_otlp_body(
                request, hosts=self._hosts, protobuf=self._protobuf, max_body=self.max_body
            )
        except BodyError as e:
            return self._refuse(e.status, e.message)

    @staticmethod
    def accepted(content_type: str) -> web.Response:
        """The reply to an export taken: an empty response in the request's encoding."""
        if content_type == _JSON:
            return web.Response(body=b"{}", content_type=_JSON)
        return web.Response(body=b"", content_type="application/x-protobuf")

    async def decoded(
        self,
        request: web.Request,
        decode: Callable[[bytes, str, str], list[_Item]],
        where: str,
        what: str,
    ) -> tuple[str, list[_Item]] | web.Response:
        """The content type and what ``decode(body, content_type, where)`` reads of a
        :meth:`checked_body`; else the refusal (400 naming ``what`` for a value no decoder
        check caught). For ``/v1/traces`` and ``/v1/logs``."""
        checked = await self.checked_body(request)
        if isinstance(checked, web.Response):
            return checked
        ctype, body = checked
        try:
            return ctype, decode(body, ctype, where)
        except InputError as e:
            return self._refuse(400, str(e))
        except (ValueError, RecursionError) as e:  # a value no decoder check caught
            return self._refuse(400, f"{what} cannot be read ({type(e).__name__})")

    async def _handle(self, request: web.Request) -> web.Response:
        got = await self.decoded(request, decode_body, "OTLP request body", "OTLP request body")
        if isinstance(got, web.Response):
            return got
        ctype, spans = got
        self._route(spans)
        return self.accepted(ctype)
