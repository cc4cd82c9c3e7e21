"""Sync tools run on the tool set's own daemon threads, not the event loop's default pool.

Before, a sync tool ran through ``asyncio.to_thread``: a hung tool whose case timed out
kept a default-pool thread, and once the pool's threads were all held, every other case's
sync tools waited behind them. The pool is made small here (as on a small machine, where
it has ``cpu_count + 4`` threads) so that a few hung calls fill it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web

from agenteval.agents.tool_loop import ToolLoopAgent
from agenteval.agents.toolset import ToolSet
from agenteval.cases.case import Case
from agenteval.llm.http import RetryPolicy
from agenteval.run.runner import run_one

POOL = 3
RELEASE = threading.Event()


def hang(x: int) -> int:
    """Blocks until the test releases it (a tool stuck on a dead socket)."""
    RELEASE.wait(30)
    return x


def quick(x: int) -> int:
    """Returns at once."""
    return x + 1


def _reply(message: dict[str, Any]) -> web.Response:
    return web.json_response(
        {
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }
    )


async def _chat(request: web.Request) -> web.Response:
    body = await request.json()
    msgs = body["messages"]
    tool = next(m["content"] for m in msgs if m["role"] == "user").split(":")[0]
    if any(m["role"] == "tool" for m in msgs):
        return _reply({"role": "assistant", "content": "done"})
    call = {"id": "t1", "type": "function", "function": {"name": tool, "arguments": '{"x": 1}'}}
    return _reply({"role": "assistant", "content": None, "tool_calls": [call]})


def test_hung_sync_tools_do_not_delay_other_cases_tools() -> None:
    async def main() -> tuple[list[Any], list[Any], float]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(POOL))
        app = web.Application()
        app.router.add_post("/v1/chat/completions", _chat)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        base = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        agent = ToolLoopAgent(
            base, "scripted", ToolSet.from_functions([hang, quick]), policy=RetryPolicy(0)
        )
        await agent.start()
        try:
            hung = await asyncio.gather(
                *(
                    run_one(agent, Case(id=f"h{i}", input=f"hang:{i}"), 0, timeout_s=0.5)
                    for i in range(POOL + 1)
                )
            )
            t0 = time.monotonic()
            fast = await asyncio.gather(
                *(
                    run_one(agent, Case(id=f"q{i}", input=f"quick:{i}"), 0, timeout_s=5)
                    for i in range(4)
                )
            )
            elapsed = time.monotonic() - t0
        finally:
            RELEASE.set()  # let the hung tools return, so their threads end
            await agent.close()
            await runner.cleanup()
        return hung, fast, elapsed

    RELEASE.clear()
    hung, fast, elapsed = asyncio.run(main())
    assert all(t.failure is not None and t.failure.cause == "timeout" for t in hung)
    assert [t.failure for t in fast] == [None] * 4
    assert [t.output for t in fast] == ["done"] * 4
    assert all(t.tool_calls[0].result == 2 for t in fast)
    assert elapsed < 2.0, elapsed
