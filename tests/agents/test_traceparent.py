"""The HTTP adapters send a W3C traceparent per trial; a retry keeps the trial's trace id."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from agenteval.agents.base import AgentOutput, Recorder
from agenteval.agents.http_json import HttpJsonAgent
from agenteval.agents.openai_chat import OpenAIChatAgent
from agenteval.cases.case import Case
from agenteval.llm.http import RetryPolicy

W3C = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-01")  # version 00, sampled


async def serve(seen: list[str | None]) -> web.AppRunner:
    """Answers 503 to every first request of a trace, then 200 (both adapters' shapes)."""
    tries: dict[str | None, int] = {}

    async def handle(request: web.Request) -> web.Response:
        tp = request.headers.get("traceparent")
        seen.append(tp)
        tries[tp] = tries.get(tp, 0) + 1
        if tries[tp] == 1:
            return web.Response(status=503)
        return web.json_response(
            {
                "answer": "ok",
                "choices": [{"message": {"role": "assistant", "content": "ok"}}],
            }
        )

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


def run_twice(make: Any) -> tuple[list[str | None], list[AgentOutput]]:
    seen: list[str | None] = []

    async def go() -> list[AgentOutput]:
        runner = await serve(seen)
        port = runner.addresses[0][1]
        agent = make(f"http://127.0.0.1:{port}")
        await agent.start()
        try:
            outs = [await agent.run(Case(id=str(i), input="hi"), 0, Recorder()) for i in (1, 2)]
        finally:
            await agent.close()
            await runner.cleanup()
        return outs

    return seen, asyncio.run(go())


POLICY = RetryPolicy(max_retries=2, base_s=0.001)


def check(seen: list[str | None], outs: list[AgentOutput]) -> None:
    assert len(seen) == 4  # two trials, each retried once
    ids = []
    for tp in seen:
        m = W3C.fullmatch(tp or "")
        assert m, tp
        ids.append(m.group(1))
    assert ids[0] == ids[1] and ids[2] == ids[3]  # the retry keeps the trial's trace
    assert ids[0] != ids[2]  # a fresh trace per trial
    assert [o.metadata["trace_id"] for o in outs] == [ids[0], ids[2]]


def test_http_json_sends_one_traceparent_per_trial(tmp_path: Path) -> None:
    cfg = tmp_path / "agent.yaml"

    def make(base: str) -> HttpJsonAgent:
        cfg.write_text(f"url: {base}/ask\nresponse: {{output: answer}}\n")
        return HttpJsonAgent(cfg, policy=POLICY, rng=random.Random(0))

    check(*run_twice(make))


def test_openai_chat_sends_one_traceparent_per_trial() -> None:
    def make(base: str) -> OpenAIChatAgent:
        return OpenAIChatAgent(f"{base}/v1", "m", policy=POLICY, rng=random.Random(0))

    check(*run_twice(make))
