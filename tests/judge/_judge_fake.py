"""A scripted fake judge: a real aiohttp OpenAI-style server on 127.0.0.1 in a thread.

Replies are chosen by *rules* keyed on the fenced answer text of the prompt (or, for
rubrics that show no answer, the fenced tool results / context / question). A rule is a
:class:`Reply` or a list of them, consumed one per request (the last one repeats). Every
request body and its headers are logged in ``requests``, so tests count calls at the server.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agenteval.llm.fence import unfence

_BOUNDARY = re.compile(r"FENCE-[0-9a-f]{32}")


@dataclass
class Reply:
    """One canned response."""

    content: str | None = "The answer matches.\nGRADE: C"
    status: int = 200
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = (100, 20)
    refusal: str | None = None
    finish_reason: str = "stop"


def fenced_fields(body: dict[str, Any]) -> dict[str, str]:
    """label -> text of every fence in the request's user message."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    m = _BOUNDARY.search(system)
    assert m is not None, "the system message names no boundary"
    return dict(unfence(user, m.group(0)))


def key_of(body: dict[str, Any]) -> str:
    f = fenced_fields(body)
    for label in ("answer", "tool_results", "context", "question"):
        if label in f:
            return f[label]
    raise AssertionError("nothing fenced")


class FakeJudge:
    """Context manager running the server; ``base_url`` ends with ``/v1``."""

    def __init__(
        self,
        rules: Mapping[str, Reply | list[Reply]] | None = None,
        default: Reply | None = None,
        script: Callable[[dict[str, Any]], Reply] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.delay_s = delay_s  # every reply waits this long (a slow judge)
        self.rules: dict[str, Reply | list[Reply]] = dict(rules or {})
        self.default = default or Reply()
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def _pick(self, body: dict[str, Any]) -> Reply:
        if self.script is not None:
            return self.script(body)
        rule = self.rules.get(key_of(body), self.default)
        if isinstance(rule, list):
            with self._lock:
                return rule.pop(0) if len(rule) > 1 else rule[0]
        return rule

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
        r = self._pick(body)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if r.raw is not None:
            return web.Response(status=r.status, body=r.raw, headers=r.headers)
        if r.status != 200:
            return web.Response(status=r.status, text='{"error": "nope"}', headers=r.headers)
        message: dict[str, Any] = {"role": "assistant", "content": r.content}
        if r.refusal is not None:
            message["refusal"] = r.refusal
        data: dict[str, Any] = {
            "id": "x",
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": r.finish_reason}],
        }
        if r.usage is not None:
            data["usage"] = {"prompt_tokens": r.usage[0], "completion_tokens": r.usage[1]}
        return web.Response(text=json.dumps(data), content_type="application/json")

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = runner.addresses[0][1]
        self._stop = asyncio.Event()
        self._ready.set()
        loop.run_until_complete(self._stop.wait())
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def __enter__(self) -> FakeJudge:
        self._thread.start()
        assert self._ready.wait(10), "fake judge did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
