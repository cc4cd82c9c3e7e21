"""The fake OpenAI-compatible server: answers, usage, fault selection, counters, CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import aiohttp
import pytest

from agenteval.testing import FAULT_KINDS, FakeConfig, fake_openai_server


def _body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m-1", "messages": [{"role": "user", "content": text}], **extra}


async def _post(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], **kw: Any
) -> tuple[int, Any]:
    async with session.post(url + "/chat/completions", json=body, **kw) as r:
        raw = await r.read()
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, raw


def test_default_answer_echoes_with_usage_and_model() -> None:
    async def go() -> Any:
        async with fake_openai_server() as srv, aiohttp.ClientSession() as s:
            status, data = await _post(s, srv.base_url, _body("how are you today"))
            return status, data, dict(srv.counts)

    status, data, counts = asyncio.run(go())
    assert status == 200
    assert data["model"] == "m-1"
    assert data["choices"][0]["message"] == {
        "role": "assistant",
        "content": "echo: how are you today",
    }
    assert data["usage"]["prompt_tokens"] == 4
    assert data["usage"]["completion_tokens"] == 5
    assert counts == {"ok": 1}


def test_answer_echoes_a_tool_result_when_last() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny 21C"},
        ],
    }

    async def go() -> Any:
        async with fake_openai_server() as srv, aiohttp.ClientSession() as s:
            return await _post(s, srv.base_url, body)

    _, data = asyncio.run(go())
    assert data["choices"][0]["message"]["content"] == "echo: sunny 21C"


def test_marker_with_count_fails_first_attempts_then_succeeds() -> None:
    async def go() -> Any:
        async with fake_openai_server() as srv, aiohttp.ClientSession() as s:
            statuses = [
                (await _post(s, srv.base_url, _body("q [[fault:503:2]]")))[0] for _ in range(4)
            ]
            other = (await _post(s, srv.base_url, _body("other [[fault:503:2]]")))[0]
            return statuses, other, dict(srv.counts)

    statuses, other, counts = asyncio.run(go())
    assert statuses == [503, 503, 200, 200]
    assert other == 503  # counted per message text
    assert counts == {"503": 3, "ok": 2}


def test_header_fault_and_permanent_marker() -> None:
    async def go() -> Any:
        async with fake_openai_server() as srv, aiohttp.ClientSession() as s:
            a = await _post(s, srv.base_url, _body("x"), headers={"X-Fault": "404"})
            b = await _post(s, srv.base_url, _body("x [[fault:429]]"))
            c = await _post(s, srv.base_url, _body("x"), headers={"X-Fault": "nonsense"})
            return a[0], b[0], c, dict(srv.counts)

    a, b, c, counts = asyncio.run(go())
    assert (a, b) == (404, 429)
    assert c[0] == 400 and "unknown fault" in c[1]["error"]["message"]
    assert counts["404"] == 1 and counts["429"] == 1


def test_429_carries_retry_after_and_noretry_does_not() -> None:
    async def go() -> Any:
        cfg = FakeConfig(retry_after_s=0.25)
        async with fake_openai_server(cfg) as srv, aiohttp.ClientSession() as s:
            url = srv.base_url + "/chat/completions"
            async with s.post(url, json=_body("a [[fault:429]]")) as r1:
                h1 = r1.headers.get("Retry-After")
            async with s.post(url, json=_body("a [[fault:429_noretry]]")) as r2:
                h2 = r2.headers.get("Retry-After")
            return h1, h2

    assert asyncio.run(go()) == ("0.25", None)


@pytest.mark.parametrize("kind", ["tool_call", "bad_tool_json"])
def test_tool_call_faults_name_the_first_offered_tool(kind: str) -> None:
    tools = [{"type": "function", "function": {"name": "search", "parameters": {}}}]

    async def go() -> Any:
        async with fake_openai_server() as srv, aiohttp.ClientSession() as s:
            return await _post(s, srv.base_url, _body(f"find [[fault:{kind}]]", tools=tools))

    _, data = asyncio.run(go())
    call = data["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "search"
    args = call["function"]["arguments"]
    if kind == "tool_call":
        assert json.loads(args) == {"query": f"find [[fault:{kind}]]"}
    else:
        with pytest.raises(ValueError):
            json.loads(args)


def test_seeded_schedule_is_reproducible() -> None:
    cfg = FakeConfig(fault_rates={"500": 0.3, "429": 0.2}, seed=7)

    async def go() -> list[int]:
        async with fake_openai_server(cfg) as srv, aiohttp.ClientSession() as s:
            return [(await _post(s, srv.base_url, _body("x")))[0] for _ in range(40)]

    first, second = asyncio.run(go()), asyncio.run(go())
    assert first == second
    assert {200, 500, 429} == set(first)


def test_config_rejects_unknown_kinds_and_excess_probability() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        FakeConfig(fault_rates={"explode": 0.1})
    with pytest.raises(ValueError, match="at most 1"):
        FakeConfig(fault_rates={"500": 0.7, "502": 0.7})
    assert "hang" in FAULT_KINDS


def test_hang_is_ended_by_close() -> None:
    async def go() -> float:
        loop = asyncio.get_running_loop()
        async with fake_openai_server() as srv:
            session = aiohttp.ClientSession()
            task = asyncio.create_task(_post(session, srv.base_url, _body("[[fault:hang]]")))
            await asyncio.sleep(0.05)
            assert srv.counts["hang"] == 1
            t0 = loop.time()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await session.close()
        return loop.time() - t0

    assert asyncio.run(go()) < 30  # closing never waits for the hour-long hang


def test_cli_prints_ready_and_serves() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agenteval.testing.fake_openai", "--port", "0", "--latency-ms", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY ")
        port = int(line.split()[1])

        async def go() -> Any:
            async with aiohttp.ClientSession() as s:
                return await _post(s, f"http://127.0.0.1:{port}/v1", _body("ping"))

        status, data = asyncio.run(go())
        assert status == 200 and data["choices"][0]["message"]["content"] == "echo: ping"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.stderr is not None
    assert "Traceback" not in proc.stderr.read()
