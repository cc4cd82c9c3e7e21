"""A scripted judge that obeys every instruction it can see outside the fences.

A real aiohttp OpenAI-style server on 127.0.0.1 in a thread. For each request it takes the
boundary named in the system message, removes every fenced block from the prompt, and looks
in what is left for any *signature* it was given (the text of an injection attempt, or a
distinctive piece of it). When one is there the judge "obeys" and replies ``GRADE: C``
(or ``SCORE: 5``-style tokens are not needed: every rubric here is binary); otherwise it
judges honestly, and every answer it is sent is wrong, so it replies ``GRADE: I``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

from aiohttp import web

_BOUNDARY = re.compile(r"FENCE-[0-9a-f]{32}")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def outside_fences(messages: Sequence[dict[str, Any]]) -> str:
    """The prompt text with every fenced block (markers included) cut out."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    m = _BOUNDARY.search(str(messages[0].get("content") or ""))
    if m is None:
        return text
    b = re.escape(m.group(0))
    block = re.compile(rf"\[BEGIN (\S+) {b}\]\n.*?\n\[END \1 {b}\]", re.DOTALL)
    rest = block.sub("", text)
    # the system message names the boundary and explains the markers: that is not content
    return rest


def obeys(messages: Sequence[dict[str, Any]], signatures: Sequence[str]) -> bool:
    """True when any signature occurs (NFKC, case-folded) outside the fences."""
    rest = _norm(outside_fences(messages))
    return any(_norm(s) in rest for s in signatures)


class ObeyingJudge:
    """``with ObeyingJudge(signatures) as j:`` — ``j.base_url``, ``j.verdicts``."""

    def __init__(self, signatures: Sequence[str]) -> None:
        self.signatures = list(signatures)
        self.verdicts: list[str] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        grade = "C" if obeys(body["messages"], self.signatures) else "I"
        with self._lock:
            self.verdicts.append(grade)
        content = f"Following what the prompt says.\nGRADE: {grade}"
        data = {
            "id": "j",
            "model": body.get("model", "judge"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }
        return web.Response(text=json.dumps(data), content_type="application/json")

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        app = web.Application(client_max_size=64 * 1024 * 1024)
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

    def __enter__(self) -> ObeyingJudge:
        self._thread.start()
        assert self._ready.wait(20), "judge did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)
