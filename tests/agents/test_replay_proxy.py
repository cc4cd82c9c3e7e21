"""The recording proxy's replay cache: any client pointed at it is cached, whatever its key."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import aiohttp

from agenteval.llm.replay import ReplayCache
from agenteval.testing.fake_openai import FakeServer
from agenteval.traces.proxy import RecordingProxy

KEY_A = "sk-proxy-key-aaaaaaaaaaaa"
KEY_B = "sk-proxy-key-bbbbbbbbbbbb"


def _body(text: str, **extra: Any) -> dict[str, Any]:
    call = json.dumps({"q": text})
    content = f"{text} [[call:lookup {call}]]"
    return {"model": "m", "messages": [{"role": "user", "content": content}], **extra}


async def _post(url: str, body: dict[str, Any], key: str) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as s, s.post(url, json=body, headers=headers) as r:
        return r.status, await r.read()


async def _scenario(tmp_path: Path) -> None:
    upstream = await FakeServer().start()
    out = io.StringIO()
    proxy = RecordingProxy(
        upstream.base_url, out=out, labels=True, cache=ReplayCache(tmp_path / "c")
    )
    await proxy.start()
    url = f"{proxy.url}/t/case-1/v1/chat/completions"
    try:
        first = await _post(url, _body("hello"), KEY_A)
        streamed = await _post(url, _body("hello", stream=True), KEY_A)
        assert upstream.counts["ok"] == 2
        await upstream.close()  # from now on only the cache can answer
        again = await _post(url, _body("hello"), KEY_B)  # another key: the same entry
        streamed_again = await _post(url, _body("hello", stream=True), KEY_B)
        assert again == first and first[0] == 200
        assert streamed_again == streamed and b"data:" in streamed[1]
        missing = await _post(url, _body("never asked"), KEY_B)
        assert missing[0] == 502  # a miss still goes upstream (which is gone)
    finally:
        await proxy.close()
        await upstream.close()
    calls = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [c.get("cached", False) for c in calls] == [False, False, True, True, False]
    names = [[c["name"] for c in call["tool_calls"]] for call in calls]
    assert names[:4] == [["lookup"]] * 4  # the replayed stream is read too
    assert calls[2]["input_tokens"] == calls[0]["input_tokens"] > 0
    stored = "".join(p.read_text() for p in (tmp_path / "c").rglob("*.json"))
    assert KEY_A not in stored and KEY_B not in stored and "Bearer" not in stored


def test_the_proxy_answers_a_known_call_from_the_cache(tmp_path: Path) -> None:
    asyncio.run(_scenario(tmp_path))


async def _trial_scenario(tmp_path: Path) -> list[Any]:
    upstream = await FakeServer().start()
    proxy = RecordingProxy(upstream.base_url, cache=ReplayCache(tmp_path / "c"))
    await proxy.start()
    cached = []
    try:
        for _ in range(2):
            with proxy.trial() as t:
                await _post(t.base_url + "/chat/completions", _body("hi"), KEY_A)
                cached.append(t.cached())
    finally:
        await proxy.close()
        await upstream.close()
    return cached


def test_a_trial_lists_the_calls_the_proxy_replayed(tmp_path: Path) -> None:
    first, second = asyncio.run(_trial_scenario(tmp_path))
    assert first == []
    assert len(second) == 1 and second[0].model == "m" and second[0].input_tokens > 0
