"""A recording proxy for OpenAI-compatible model APIs: model traffic → trial trajectories.

For agents agenteval cannot instrument (another process, another language, a framework
without tracing): point the agent's LLM client at the proxy and every model call, every
tool call the model requested and every tool output the agent sent back is recorded
(:mod:`agenteval.traces.proxy_wire` says what is read, :mod:`agenteval.traces.proxy_records`
how it becomes a trajectory).

**URLs.** The proxy listens on ``http://127.0.0.1:PORT``. During a run each trial gets
its own base URL ``http://127.0.0.1:PORT/t/<token>/v1``, ``<token>`` 32 random url-safe
characters (:func:`secrets.token_urlsafe`), valid only while that trial runs: a request
under any other token is answered ``404`` with a JSON error and never forwarded. A
request ``.../t/<token>/v1/<rest>`` goes to ``UPSTREAM/<rest>`` (``UPSTREAM`` is the
upstream base URL, e.g. ``https://api.openai.com/v1``), query string kept. Standalone
(``agenteval proxy``, ``labels=True``) any token is accepted as a free *label* and
``http://127.0.0.1:PORT/v1`` works too (label ``""``).

**Forwarding is unchanged**: method, body bytes and every header but the hop-by-hop
ones (``Connection``, ``Keep-Alive``, ``Transfer-Encoding``, ``TE``, ``Upgrade``,
``Proxy-*``, ``Trailer``) and ``Host`` go upstream — the agent's own ``Authorization``
included; the upstream's status, headers (same exceptions) and body bytes come back, a
compressed body still compressed, a stream (``text/event-stream``) chunk by chunk as it
arrives. Every path under the upstream's base is forwarded (``/v1/models``...);
``chat/completions`` and ``responses`` are also read. A path with a ``.`` or ``..``
segment, also percent-encoded (``%2e%2e``, ``..%2f``, ``%252e``) or with an encoded
slash or backslash, is answered ``400`` and never forwarded: nothing outside the base
path is reachable.

**Credentials in the upstream URL** (``https://user:pass@host/v1``): the agent's own
``Authorization`` header wins when it sends one (it is forwarded unchanged, and the URL's
credentials are not used); a request without one gets ``Authorization: Basic`` from the
URL. The URL is forwarded without its user info either way.

**Secrets**: no header is ever recorded. Before a call is recorded, the value of every
request header but the public ones (:func:`~agenteval._util.secrets.header_secrets`:
``Content-Type``, ``Accept``, ``User-Agent``..., ``x-stainless-*``), each cookie's value,
the credential after ``Bearer``, and the upstream URL's credentials are removed from every
recorded string (:class:`~agenteval._util.secrets.Redactor`), wherever they appear; the
upstream URL is written only without its credentials.

**Replay cache** (``cache``, docs/cache.md): a model call already stored is answered from
the cache without reaching the upstream (:mod:`agenteval.traces.proxy_cache`).

Which requests are forwarded where is :mod:`agenteval.traces.proxy_paths`; a trial's view
(its URL, its calls) :mod:`agenteval.traces.proxy_trial`.

**Upstream unreachable** (refused, reset before the response, DNS failure): the agent
gets ``502`` with a JSON error naming the upstream, the call is recorded with ``error``;
when the agent then raises, the trial fails with cause ``connection`` and that message.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO, Any

import aiohttp
from aiohttp import web
from yarl import URL

from agenteval._util.hosts import HostCheck
from agenteval._util.net import request_error_log
from agenteval._util.say import Say, log_warning
from agenteval._util.secrets import Redactor, header_secrets, redact_url, url_secrets
from agenteval.llm.recorder import AgentFailure
from agenteval.llm.replay import ReplayCache
from agenteval.traces import proxy_cache
from agenteval.traces.proxy_paths import HOP_HEADERS, api_of, check_upstream, raw_rest
from agenteval.traces.proxy_records import ModelCall
from agenteval.traces.proxy_trial import BASE_URL, ProxyTrial, model_base_url
from agenteval.traces.proxy_wire import ResponseReader, read_request

__all__ = ["ProxyTrial", "RecordingProxy", "check_upstream", "model_base_url"]


class RecordingProxy:
    """The proxy server (module docstring); also a capture source named ``proxy``.

    ``out``: an open text file every call is appended to as one JSON line
    (:meth:`ModelCall.to_json`) as soon as it ends; ``labels``: accept any token
    (standalone); ``cache``: the replay cache (:mod:`agenteval.traces.proxy_cache`). Call
    :meth:`start` on the event loop that will run the trials.
    """

    name = "proxy"

    def __init__(
        self,
        upstream: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        out: IO[str] | None = None,
        labels: bool = False,
        allow_hosts: tuple[str, ...] = (),
        cache: ReplayCache | None = None,
        say: Say = log_warning,
    ) -> None:
        self.cache = cache
        self._say = say
        self.requests_not_read = 0
        """Requests that were not HTTP the server could read (answered 400, told in one
        line each: never aiohttp's traceback)."""
        base = URL(upstream.rstrip("/"))
        self.upstream = str(base.with_user(None).with_password(None)) if base.user else str(base)
        self._basic = (
            "Basic " + base64.b64encode(f"{base.user}:{base.password or ''}".encode()).decode()
            if base.user is not None
            else None
        )
        self._url_keys = url_secrets(upstream)
        self.host = host
        self.port = port
        self._out = out
        self._labels = labels
        self._hosts = HostCheck(host, allow_hosts)
        self._trials: dict[str, ProxyTrial] = {}
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.calls_recorded = 0
        self.write_error: OSError | None = None
        self.failed = asyncio.Event()  # set when ``out`` cannot be written

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (the port is known once started)."""
        return f"http://{self.host}:{self.port}"

    def base_url(self, token: str) -> str:
        """The base URL an OpenAI client takes for ``token``."""
        return f"{self.url}/t/{token}/v1"

    async def start(self) -> RecordingProxy:
        """Listen (port 0: a free one, then in :attr:`port`); returns self."""
        if self._runner is not None:
            return self
        self._session = aiohttp.ClientSession(
            auto_decompress=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
            connector=aiohttp.TCPConnector(limit=0),
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
        )
        app = web.Application(client_max_size=1 << 30, middlewares=[self._host_check])
        app.router.add_route("*", "/t/{token}/{rest:.*}", self._trial_route)
        app.router.add_route("*", "/{rest:.*}", self._plain_route)
        refused = request_error_log("agenteval.proxy", self._not_read)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0, logger=refused)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    def _not_read(self, _status: int, line: str) -> None:
        self.requests_not_read += 1
        self._say(f"agenteval proxy: {line}")

    async def close(self) -> None:
        """Stop listening and close the upstream connections."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    @contextmanager
    def trial(self) -> Iterator[ProxyTrial]:
        """A fresh token for one trial; :func:`model_base_url` gives its URL inside.

        When the block raises after the upstream was unreachable, the exception becomes
        ``AgentFailure("connection", ...)`` naming the upstream.
        """
        token = secrets.token_urlsafe(24)
        t = ProxyTrial(self.base_url(token))
        self._trials[token] = t
        ctx = BASE_URL.set(t.base_url)
        try:
            yield t
        except Exception as e:
            if isinstance(e, AgentFailure) or t.upstream_error is None:
                raise
            raise AgentFailure(
                "connection", f"{t.upstream_error} (the agent then raised {type(e).__name__})"
            ) from e
        finally:
            BASE_URL.reset(ctx)
            del self._trials[token]

    @web.middleware
    async def _host_check(self, request: web.Request, handler: Any) -> web.StreamResponse:
        host = request.headers.get("Host")
        if not self._hosts.allows(host):  # a DNS-rebinding page: nothing is forwarded
            body = {
                "error": {"message": self._hosts.refusal(host or ""), "type": "agenteval_proxy"}
            }
            return web.json_response(body, status=421)
        resp: web.StreamResponse = await handler(request)
        return resp

    def _not_found(self, message: str) -> web.Response:
        body = {"error": {"message": f"agenteval proxy: {message}", "type": "agenteval_proxy"}}
        return web.json_response(body, status=404)

    async def _trial_route(self, request: web.Request) -> web.StreamResponse:
        token = request.match_info["token"]
        t = self._trials.get(token)
        if t is None and not self._labels:
            return self._not_found(
                "no trial is running under this URL (unknown or finished token); nothing"
                " was forwarded"
            )
        return await self._route(request, request.match_info["rest"], token, t)

    async def _plain_route(self, request: web.Request) -> web.StreamResponse:
        if not self._labels:
            return self._not_found("use the per-trial base URL .../t/<token>/v1")
        return await self._route(request, request.match_info["rest"], "", None)

    async def _route(
        self, request: web.Request, rest: str, label: str, t: ProxyTrial | None
    ) -> web.StreamResponse:
        if rest != "v1" and not rest.startswith("v1/"):
            return self._not_found(f"paths start with /v1 (got /{rest})")
        raw = raw_rest(request.raw_path, 3 if request.match_info.get("token") is not None else 1)
        if raw is None:
            body = {
                "error": {
                    "message": "agenteval proxy: the path has a '.' or '..' segment (or an"
                    " encoded slash); nothing outside the upstream's base path is forwarded",
                    "type": "agenteval_proxy",
                }
            }
            return web.json_response(body, status=400)
        rest = raw
        sink: Callable[[ModelCall], None] = t.calls.append if t is not None else _drop
        return await self._forward(request, rest, label if self._labels else "", sink)

    async def _forward(
        self, request: web.Request, rest: str, label: str, sink: Callable[[ModelCall], None]
    ) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        api = api_of(rest) if request.method == "POST" else "other"
        call = ModelCall(api=api, path="/" + rest, started_at=datetime.now(UTC), label=label)
        t0 = time.perf_counter()
        keys = header_secrets(request.headers.items()) + self._url_keys
        if api != "other":
            read_request(call, body)
        sink(call)  # seen at once, so a trial that ends now still knows of it
        _, q, query = request.raw_path.partition("?")  # as sent: nothing re-encoded
        url = f"{self.upstream}/{rest}" + (f"?{query}" if q and query else "")
        key = None
        if self.cache is not None and api != "other":  # the replay cache
            key = proxy_cache.key_of(self.cache, url, body, keys)
            hit = proxy_cache.lookup(self.cache, key)
            if hit is not None:
                return self._replay(hit, call, t0, keys)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_HEADERS]
        if self._basic is not None and "Authorization" not in request.headers:
            headers.append(("Authorization", self._basic))  # the agent's own one wins
        try:
            up_cm = self._session.request(
                request.method,
                URL(url, encoded=True),
                data=body,
                headers=headers,
                allow_redirects=False,
            )
            up = await up_cm.__aenter__()
        except (aiohttp.ClientError, OSError, TimeoutError) as e:
            where = redact_url(self.upstream)
            call.error = f"model upstream {where} unreachable: {type(e).__name__}: {e}"
            call.status = 502
            call.latency_s = time.perf_counter() - t0
            self._write(call, keys)
            payload = {
                "error": {"message": f"agenteval proxy: {call.error}", "type": "agenteval_proxy"}
            }
            return web.json_response(payload, status=502)
        try:
            return await self._relay(request, up, call, t0, keys, url, key)
        finally:
            await up_cm.__aexit__(None, None, None)

    async def _relay(
        self,
        request: web.Request,
        up: aiohttp.ClientResponse,
        call: ModelCall,
        t0: float,
        keys: list[str],
        url: str = "",
        key: str | None = None,
    ) -> web.StreamResponse:
        call.status = up.status
        kept: list[bytes] | None = [] if key is not None and 200 <= up.status < 300 else None
        resp = web.StreamResponse(status=up.status, reason=up.reason)
        for k, v in up.headers.items():
            if k.lower() not in HOP_HEADERS:
                resp.headers.add(k, v)
        reader = ResponseReader(
            call.api, up.headers.get("Content-Type", ""), up.headers.get("Content-Encoding", "")
        )
        await resp.prepare(request)
        try:
            async for chunk in up.content.iter_any():
                reader.feed(chunk)
                if kept is not None:
                    kept.append(chunk)
                await resp.write(chunk)
        except (TimeoutError, aiohttp.ClientError, OSError) as e:
            call.error = f"the response broke off: {type(e).__name__}: {e}"
            call.latency_s = time.perf_counter() - t0
            reader.finish(call)
            self._write(call, keys)
            if request.transport is not None:
                request.transport.abort()  # the agent sees the break, as from upstream
            return resp
        call.latency_s = time.perf_counter() - t0
        reader.finish(call)
        self._write(call, keys)
        if kept is not None and key is not None and self.cache is not None:
            ctype, enc = up.headers.get("Content-Type", ""), up.headers.get("Content-Encoding", "")
            proxy_cache.store(
                self.cache, key, url, up.status, ctype, enc, kept, call.latency_s, keys
            )
        await resp.write_eof()
        return resp

    def _replay(
        self, hit: proxy_cache.ProxyHit, call: ModelCall, t0: float, keys: list[str]
    ) -> web.Response:
        """Answer from the replay cache: the call is read and recorded as if forwarded."""
        call.status, call.cached = hit.status, True
        reader = ResponseReader(call.api, hit.content_type, "")
        reader.feed(hit.body)
        call.latency_s = time.perf_counter() - t0
        reader.finish(call)
        self._write(call, keys)
        return web.Response(
            status=hit.status, body=hit.body, headers={"Content-Type": hit.content_type}
        )

    def _write(self, call: ModelCall, keys: list[str]) -> None:
        if keys:
            _scrub(call, Redactor(keys))
        self.calls_recorded += 1
        if self._out is not None and self.write_error is None:
            try:
                self._out.write(json.dumps(call.to_json(), ensure_ascii=False) + "\n")
                self._out.flush()
            except OSError as e:  # the call is still forwarded; the owner stops the proxy
                self.write_error = e
                self.failed.set()


def _drop(call: ModelCall) -> None:
    return None


def _scrub_value(value: Any, r: Redactor) -> Any:
    if isinstance(value, str):
        return r.redact(value)
    if isinstance(value, list):
        return [_scrub_value(v, r) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_value(v, r) for k, v in value.items()}
    return value


def _scrub(call: ModelCall, r: Redactor) -> None:
    """Remove the request's key values from every recorded string of ``call``."""
    for rc in call.requested:
        rc.arguments = r.redact(rc.arguments)
    for o in call.outputs:
        o.content = _scrub_value(o.content, r)
    call.tools = _scrub_value(call.tools, r)
    for key in ("unparsed", "error", "model"):
        v = getattr(call, key)
        if isinstance(v, str):
            setattr(call, key, r.redact(v))
