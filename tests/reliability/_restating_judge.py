"""A scripted judge that restates the fenced answer and may be cut off by max_tokens.

A real aiohttp OpenAI-style server on 127.0.0.1 in a thread. Its reply depends on
``mode`` (one per server):

- ``fenced_cut``: "Let me restate the answer:" then the answer's fence copied from the
  prompt (marker lines included), cut off before the closing marker, with
  ``finish_reason: length`` (what a judge hitting ``max_tokens`` sends);
- ``plain_cut``: the answer copied without fence lines, cut off, ``finish_reason: length``;
- ``code_cut``: the answer copied into a Markdown code block, cut off, ``length``;
- ``fenced_then_verdict``: the whole fence copied, then its own ``GRADE: I``, ``stop``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from typing import Any

from aiohttp import web

_FENCE = re.compile(r"(\[BEGIN answer (FENCE-[0-9a-f]{32})\]\n)(.*?)(\n\[END answer \2\])", re.S)


def restating_reply(mode: str, prompt: str) -> tuple[str, str]:
    """(content, finish_reason) of the judge's reply to a prompt holding an answer fence."""
    m = _FENCE.search(prompt)
    assert m is not None, "no answer fence in the prompt"
    begin, answer, end = m.group(1), m.group(3), m.group(4)
    intro = "Let me restate the answer before grading it:\n"
    if mode == "fenced_cut":
        return intro + begin + answer, "length"
    if mode == "plain_cut":
        return intro + answer, "length"
    if mode == "code_cut":
        return intro + "```\n" + answer, "length"
    if mode == "fenced_then_verdict":
        return intro + begin + answer + end + "\nThe answer is wrong.\nGRADE: I", "stop"
    raise ValueError(mode)


class RestatingJudge:
    """``with RestatingJudge(mode) as j:`` — ``j.base_url``, ``j.requests``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _handle(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        self.requests += 1
        prompt = "\n".join(str(m.get("content") or "") for m in body["messages"])
        content, finish = restating_reply(self.mode, prompt)
        data = {
            "id": "j",
            "model": body.get("model", "judge"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }
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
        self.port = int(runner.addresses[0][1])
        self._stop = asyncio.Event()
        self._ready.set()
        loop.run_until_complete(self._stop.wait())
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def __enter__(self) -> RestatingJudge:
        self._thread.start()
        assert self._ready.wait(20), "judge did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)
