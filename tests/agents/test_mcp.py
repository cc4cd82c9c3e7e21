"""MCP tools: a real MCP server process (tests/agents/mcp_server_fixture.py, written with the
official SDK) reached over stdio and over streamable HTTP, alone and inside the tool loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agenteval.agents.mcp_tools import McpServer, tool_result
from agenteval.agents.tool_loop import ToolLoopAgent
from agenteval.agents.toolset import ToolSet
from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.llm.http import RetryPolicy
from agenteval.run.runner import run_one
from agenteval.scorers import builtin_scorers
from agenteval.scoring.apply import Scorers

pytest.importorskip("mcp")

FIXTURE = Path(__file__).with_name("mcp_server_fixture.py")
STDIO = [sys.executable, str(FIXTURE)]


async def _exercise(ts: ToolSet) -> None:
    await ts.start()
    try:
        defs = {d["name"]: d for d in ts.definitions()}
        assert set(defs) == {"add", "lookup_city", "fail"}
        assert defs["add"]["description"] == "Add two integers."
        assert defs["add"]["parameters"]["required"] == ["a", "b"]
        result, error = await ts.call("add", {"a": 2, "b": 40})
        assert error is None and "42" in json.dumps(result)
        result, error = await ts.call("lookup_city", {"city": "Paris"})
        assert error is None and "CANARY-PARIS-7731" in json.dumps(result)
        result, error = await ts.call("lookup_city", {"city": "Nice"})
        assert result is None and error is not None and "no city named Nice" in error
        result, error = await ts.call("fail", {"reason": "x"})
        assert result is None and error is not None
        # checked against the server's schema before the server is asked
        result, error = await ts.call("add", {"a": "two", "b": 1})
        assert error is not None and error.startswith("invalid arguments")
    finally:
        await ts.close()
    assert ts.definitions() == []


def test_stdio_server_tools() -> None:
    ts = ToolSet()
    ts.add_provider(McpServer(command=STDIO))
    asyncio.run(_exercise(ts))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http_server_tools() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [*STDIO, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            assert proc.poll() is None, "the MCP HTTP server exited"
            time.sleep(0.1)
        ts = ToolSet()
        ts.add_provider(McpServer(url=f"http://127.0.0.1:{port}/mcp"))
        asyncio.run(_exercise(ts))
    finally:
        proc.terminate()
        proc.wait(10)


def test_unstartable_server_is_an_input_error() -> None:
    ts = ToolSet()
    ts.add_provider(McpServer(command="definitely-not-a-command-xyz --flag"))
    with pytest.raises(InputError, match="definitely-not-a-command-xyz"):
        asyncio.run(ts.start())


class _Provider:
    """A provider offering one tool named ``add`` (stands in for a server here)."""

    label = "stub provider"

    def __init__(self) -> None:
        self.closed = 0

    async def start(self) -> list[tuple[dict[str, Any], Any]]:
        async def invoke(arguments: dict[str, Any]) -> Any:
            return 0

        return [({"name": "add", "parameters": {"type": "object"}}, invoke)]

    async def close(self) -> None:
        self.closed += 1


def test_name_clash_with_python_tool_closes_providers() -> None:
    def add(a: int, b: int) -> int:
        """Python add."""
        return a + b

    ts = ToolSet.from_functions([add])
    stub = _Provider()
    ts.add_provider(stub)
    with pytest.raises(InputError, match="two tools are named 'add'"):
        asyncio.run(ts.start())
    assert stub.closed == 1
    assert ts.names() == ["add"]


def test_tool_result_shapes() -> None:
    text = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert tool_result(text) == ("a\nb", None)
    structured = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"x": 1}}
    assert tool_result(structured) == ({"x": 1}, None)
    err = {"content": [{"type": "text", "text": "nope"}], "isError": True}
    assert tool_result(err) == (None, "nope")


def test_tool_loop_with_mcp_tools() -> None:
    """A scripted model calls the MCP server's tools through the loop; scores follow."""
    requests: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        requests.append(body)
        msgs = body["messages"]
        if msgs[-1]["role"] == "user":
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "m1",
                        "type": "function",
                        "function": {"name": "lookup_city", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "m2",
                        "type": "function",
                        "function": {"name": "fail", "arguments": '{"reason": "why"}'},
                    },
                ],
            }
        else:
            code = json.loads(msgs[-2]["content"])
            message = {"role": "assistant", "content": f"The code is {code['result']}."}
        return web.json_response(
            {
                "choices": [{"message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
            }
        )

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        base = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        ts = ToolSet()
        ts.add_provider(McpServer(command=STDIO))
        agent = ToolLoopAgent(base, "m", ts, policy=RetryPolicy(max_retries=0))
        case = Case(
            id="c",
            input="What is the code of Paris?",
            canary=["CANARY-PARIS-7731"],
            expected_tools=["lookup_city"],
        )
        try:
            await agent.start()
            trial = await run_one(agent, case, 0, timeout_s=60)
        finally:
            await agent.close()
            await runner.cleanup()
        assert trial.failure is None, trial.failure
        assert trial.output == "The code is CANARY-PARIS-7731."
        first, second = trial.tool_calls
        assert (first.name, first.arguments, first.error) == (
            "lookup_city",
            {"city": "Paris"},
            None,
        )
        assert second.name == "fail" and second.error is not None
        sent = {t["function"]["name"] for t in requests[0]["tools"]}
        assert sent == {"add", "lookup_city", "fail"}
        assert {d["name"] for d in trial.tools or []} == sent
        scores = Scorers(builtin_scorers()).apply(case, trial)
        assert scores["tool_grounding"].value == 1.0
        assert scores["tool_selection"].value == 1.0
        assert scores["tool_arguments_valid"].value == 1.0
        assert scores["tool_execution"].value == 0.0  # binary: one call raised

    asyncio.run(main())
