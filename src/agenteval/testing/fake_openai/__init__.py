"""A fast fake OpenAI-compatible chat endpoint with fault injection, for tests and benchmarks.

``POST /v1/chat/completions`` answers ``"echo: <text>"`` where ``<text>`` is the last
message's content when it is a tool result, else the last user message's content; the
response carries the request's ``model`` and a ``usage`` block counting words (prompt: all
message contents; completion: the answer). ``GET /v1/models`` lists one model.
``POST /v1/responses`` (Responses API) runs a tool loop scripted by ``[[call:NAME JSON]]``
markers in the user message (:mod:`agenteval.testing.fake_responses`; no faults); chat
completions follow the same markers, and both stream when asked (``"stream": true``;
:mod:`agenteval.testing.fake_stream`; a fault is never streamed).

Faults are decided per request, first match wins:

1. the ``X-Fault`` request header: ``KIND`` or ``KIND:N``;
2. a marker in the last user message: ``[[fault:KIND]]`` or ``[[fault:KIND:N]]``;
3. the seeded schedule :attr:`FakeConfig.fault_rates` (probability per kind).

With ``:N`` the fault hits the first N requests whose last user message is that text, then
requests succeed, so a transient fault is deterministic per case. Kinds (:data:`FAULT_KINDS`):
``429`` (with ``Retry-After``), ``429_noretry`` (without), ``500``, ``502``, ``503``,
``400``, ``404``, ``hang`` (sleeps ``hang_s``), ``reset_before_headers`` (closes the
connection), ``reset_after_headers`` (headers and half the body, then closes),
``truncated`` (a complete response whose body is cut mid-JSON), ``not_json``,
``no_choices``, ``empty_content``, ``bad_tool_json`` (a tool call whose arguments are not
valid JSON) and ``tool_call`` (a well-formed call of the first offered tool, or ``lookup``).

:attr:`FakeServer.counts` counts requests by outcome: ``"ok"`` or the fault kind.
Run standalone with ``python -m agenteval.testing.fake_openai --port P --latency-ms 50``
(:mod:`agenteval.testing.fake_openai.__main__`); it prints ``READY <port>`` once listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agenteval.testing.fake_responses import response_for
from agenteval.testing.fake_stream import (
    chat_chunks,
    chat_script_message,
    responses_events,
    send_events,
)

FAULT_KINDS = (
    "429",
    "429_noretry",
    "500",
    "502",
    "503",
    "400",
    "404",
    "hang",
    "reset_before_headers",
    "reset_after_headers",
    "truncated",
    "not_json",
    "no_choices",
    "empty_content",
    "bad_tool_json",
    "tool_call",
)
"""Every fault the server can inject."""

_MARKER = re.compile(r"\[\[fault:([a-z0-9_]+)(?::(\d+))?\]\]")
_JSON = "application/json"


@dataclass(frozen=True)
class FakeConfig:
    """Behaviour of a fake server.

    ``latency_ms`` delays every response; ``fault_rates`` maps fault kinds to probabilities
    drawn from ``random.Random(seed)`` once per request (their sum must be <= 1);
    ``retry_after_s`` is the ``Retry-After`` of a ``429``; ``hang_s`` how long ``hang``
    sleeps (it ends early when the server closes).
    """

    latency_ms: float = 0.0
    fault_rates: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    retry_after_s: float = 0.05
    hang_s: float = 3600.0

    def __post_init__(self) -> None:
        unknown = sorted(set(self.fault_rates) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kind(s): {', '.join(unknown)}")
        if sum(self.fault_rates.values()) > 1.0 + 1e-9:
            raise ValueError("fault probabilities must sum to at most 1")


def _words(value: Any) -> int:
    return len(value.split()) if isinstance(value, str) else 0


def _last_text(messages: list[Any], role: str) -> str | None:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == role:
            content = m.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return None


class FakeServer:
    """The fake endpoint: an aiohttp app plus its counters. See the module docstring."""

    def __init__(self, config: FakeConfig | None = None) -> None:
        self.config = config or FakeConfig()
        self.counts: Counter[str] = Counter()
        self._rng = random.Random(self.config.seed)
        self._schedule = sorted(self.config.fault_rates.items())
        self._seen: Counter[tuple[str, str]] = Counter()
        self._n = 0
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.host = "127.0.0.1"

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``: what an OpenAI client takes as base URL."""
        return f"http://{self.host}:{self.port}/v1"

    def app(self) -> web.Application:
        """The aiohttp application serving the endpoint."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/responses", self._responses)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> FakeServer:
        """Listen on ``host:port`` (0: a free port, then in :attr:`port`); returns self."""
        self._runner = web.AppRunner(
            self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, backlog=1024)
        await site.start()
        self.host = host
        self.port = int(self._runner.addresses[0][1])
        return self

    async def close(self) -> None:
        """Stop listening; requests still hanging are ended."""
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeServer:
        return self if self._runner is not None else await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _decide(self, request: web.Request, user_text: str) -> str | None:
        spec: tuple[str, str | None] | None = None
        header = request.headers.get("X-Fault")
        if header:
            name, _, count = header.partition(":")
            spec = (name, count or None)
        else:
            m = _MARKER.search(user_text)
            if m:
                spec = (m.group(1), m.group(2))
        if spec is not None:
            kind, n = spec
            if n is None or not n.isdigit():
                return kind
            key = (kind, user_text)
            if self._seen[key] >= int(n):
                return None
            self._seen[key] += 1
            return kind
        if self._schedule:
            r = self._rng.random()
            for kind, p in self._schedule:
                if r < p:
                    return kind
                r -= p
        return None

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        try:
            self._n += 1
            body = json.loads(await request.read())
            payload = response_for(body, self._n)
        except (ValueError, TypeError) as e:
            self.counts["bad_request"] += 1
            return _error(400, f"bad Responses API request: {e}")
        self.counts["ok"] += 1
        if self.config.latency_ms > 0:
            await asyncio.sleep(self.config.latency_ms / 1000)
        if body.get("stream") is True:
            return await send_events(request, responses_events(payload), named=True, done=False)
        return _json(200, payload)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
            messages = body["messages"]
            if not isinstance(messages, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self.counts["bad_request"] += 1
            return _error(400, "request body must be JSON with a 'messages' list")
        user_text = _last_text(messages, "user") or ""
        kind = self._decide(request, user_text)
        self.counts[kind or "ok"] += 1
        if self.config.latency_ms > 0:
            await asyncio.sleep(self.config.latency_ms / 1000)
        if kind is None:
            answer = self._answer(body, messages, user_text)
            if body.get("stream") is not True:
                return answer
            options = body.get("stream_options")
            usage = isinstance(options, dict) and options.get("include_usage") is True
            assert isinstance(answer.body, bytes)
            chunks = chat_chunks(json.loads(answer.body), usage)
            return await send_events(request, chunks, named=False, done=True)
        return await self._fault(kind, request, body, messages, user_text)

    def _completion(
        self, body: dict[str, Any], messages: list[Any], message: dict[str, Any], finish: str
    ) -> dict[str, Any]:
        self._n += 1
        prompt = sum(_words(m.get("content")) for m in messages if isinstance(m, dict))
        return {
            "id": f"chatcmpl-fake-{self._n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": _words(message.get("content")),
                "total_tokens": prompt + _words(message.get("content")),
            },
        }

    def _answer(self, body: dict[str, Any], messages: list[Any], user_text: str) -> web.Response:
        last = messages[-1] if messages else {}
        text = user_text
        if isinstance(last, dict) and last.get("role") == "tool":
            text = _last_text(messages, "tool") or ""
        scripted = chat_script_message(messages, user_text)
        if scripted is not None:
            return _json(200, self._completion(body, messages, scripted, "tool_calls"))
        message = {"role": "assistant", "content": f"echo: {text}"}
        return _json(200, self._completion(body, messages, message, "stop"))

    def _tool_message(self, body: dict[str, Any], user_text: str, args: str) -> dict[str, Any]:
        name = "lookup"
        tools = body.get("tools")
        if isinstance(tools, list) and tools and isinstance(tools[0], dict):
            fn = tools[0].get("function", tools[0])
            name = fn.get("name", name) if isinstance(fn, dict) else name
        call = {
            "id": f"call_{self._n + 1}",
            "type": "function",
            "function": {"name": name, "arguments": args},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    async def _fault(
        self,
        kind: str,
        request: web.Request,
        body: dict[str, Any],
        messages: list[Any],
        user_text: str,
    ) -> web.StreamResponse:
        if kind == "429":
            headers = {"Retry-After": f"{self.config.retry_after_s:g}"}
            return _error(429, "rate limited", headers)
        if kind == "429_noretry":
            return _error(429, "rate limited")
        if kind in ("500", "502", "503", "400", "404"):
            return _error(int(kind), f"injected HTTP {kind}")
        if kind == "hang":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.config.hang_s)
            return _error(503, "hang ended")
        if kind == "reset_before_headers":
            return _drop(request)
        if kind == "reset_after_headers":
            return await _half_then_drop(request, self._answer(body, messages, user_text))
        if kind == "truncated":
            full = self._answer(body, messages, user_text).body
            assert isinstance(full, bytes)
            return web.Response(body=full[: len(full) // 2], content_type=_JSON)
        if kind == "not_json":
            return web.Response(text="<html><body>Bad Gateway</body></html>", content_type=_JSON)
        if kind == "no_choices":
            payload = self._completion(body, messages, {"content": ""}, "stop")
            del payload["choices"]
            return _json(200, payload)
        if kind == "empty_content":
            message = {"role": "assistant", "content": ""}
            return _json(200, self._completion(body, messages, message, "stop"))
        if kind in ("bad_tool_json", "tool_call"):
            args = '{"query": "unterminated' if kind == "bad_tool_json" else None
            args = args or json.dumps({"query": user_text})
            message = self._tool_message(body, user_text, args)
            return _json(200, self._completion(body, messages, message, "tool_calls"))
        return _error(400, f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")


def _json(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status, body=json.dumps(payload).encode(), content_type=_JSON, headers=headers
    )


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    return _json(status, {"error": {"message": message, "code": status}}, headers)


def _drop(request: web.Request) -> web.Response:
    transport = request.transport
    if transport is not None:
        transport.abort()
    return web.Response(status=500)  # never reaches the client


async def _half_then_drop(request: web.Request, full: web.Response) -> web.StreamResponse:
    body = full.body
    assert isinstance(body, bytes)
    resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
    resp.content_length = len(body)
    await resp.prepare(request)
    await resp.write(body[: len(body) // 2])
    transport = request.transport
    if transport is not None:
        transport.abort()
    return resp


async def start_fake_server(
    config: FakeConfig | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> FakeServer:
    """Start a :class:`FakeServer` (0: a free port) and return it; call ``close()`` after."""
    return await FakeServer(config).start(host, port)


@contextlib.asynccontextmanager
async def fake_openai_server(
    config: FakeConfig | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[FakeServer]:
    """``async with fake_openai_server(...) as srv:`` — ``srv.base_url``, ``srv.counts``."""
    server = await start_fake_server(config, host=host, port=port)
    try:
        yield server
    finally:
        await server.close()
