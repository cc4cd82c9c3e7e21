"""OpenAIChatAgent and chat_completion against the fake server and small test servers."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.agents.openai_chat import OpenAIChatAgent, chat_completion
from agenteval.cases.case import Case
from agenteval.llm.http import HttpClient, RetryPolicy
from agenteval.testing import fake_openai_server

FAST = RetryPolicy(max_retries=3, base_s=0.001, cap_s=0.01, request_timeout_s=2.0)
KEY = "sk-live-abcdef0123456789"
TOOLS = [{"name": "search", "description": "find", "parameters": {"type": "object"}}]


@asynccontextmanager
async def serve(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


async def _run_agent(
    agent: OpenAIChatAgent, case: Case
) -> tuple[AgentOutput | AgentFailure, Recorder]:
    rec = Recorder()
    await agent.start()
    try:
        return await agent.run(case, 0, rec), rec
    except AgentFailure as e:
        return e, rec
    finally:
        await agent.close()


def run_on_fake(
    case: Case, **kw: Any
) -> tuple[AgentOutput | AgentFailure, Recorder, dict[str, int]]:
    async def go() -> Any:
        async with fake_openai_server() as srv:
            agent = OpenAIChatAgent(
                srv.base_url, "small-model", policy=FAST, rng=random.Random(1), **kw
            )
            out, rec = await _run_agent(agent, case)
            return out, rec, dict(srv.counts)

    result: tuple[AgentOutput | AgentFailure, Recorder, dict[str, int]] = asyncio.run(go())
    return result


def test_black_box_answer_usage_and_transcript() -> None:
    out, rec, counts = run_on_fake(Case(id="1", input="capital of France"))
    assert isinstance(out, AgentOutput)
    assert out.output == "echo: capital of France"
    assert out.tool_calls == [] and out.tools is None
    assert [(u.model, u.input_tokens, u.output_tokens) for u in rec.usage] == [
        ("small-model", 3, 4)
    ]
    assert out.messages is not None and out.messages[-1]["role"] == "assistant"
    assert rec.trace is not None  # the trial's traceparent (agenteval.llm.propagation)
    assert out.metadata == {"finish_reason": "stop", "trace_id": rec.trace.trace_id}
    assert counts == {"ok": 1}


def test_prompt_template_is_rendered() -> None:
    case = Case(id="7", input="2+2", context="math", metadata={"country": "FR"})
    out, _, _ = run_on_fake(
        case, prompt_template="Q {id} ({country}): {input} | {context} | {{raw}}"
    )
    assert isinstance(out, AgentOutput)
    assert out.output == "echo: Q 7 (FR): 2+2 | math | {raw}"


def test_transient_fault_recorded_then_success() -> None:
    out, rec, counts = run_on_fake(Case(id="1", input="hi [[fault:502:2]]"))
    assert isinstance(out, AgentOutput) and out.output == "echo: hi [[fault:502:2]]"
    assert [r.reason for r in rec.retries] == ["server_error", "server_error"]
    assert counts == {"502": 2, "ok": 1}


def test_tool_call_in_response_is_recorded_with_offered_tools() -> None:
    out, _, _ = run_on_fake(Case(id="1", input="look [[fault:tool_call]]", tools=TOOLS))
    assert isinstance(out, AgentOutput)
    assert out.output == ""
    assert out.tool_calls is not None and len(out.tool_calls) == 1
    call = out.tool_calls[0]
    assert (call.name, call.arguments) == ("search", {"query": "look [[fault:tool_call]]"})
    assert call.id and out.tools == TOOLS
    assert out.metadata["finish_reason"] == "tool_calls"


def test_invalid_tool_arguments_are_kept_raw() -> None:
    out, _, _ = run_on_fake(Case(id="1", input="[[fault:bad_tool_json]]"))
    assert isinstance(out, AgentOutput) and out.tool_calls is not None
    assert out.tool_calls[0].arguments == '{"query": "unterminated'
    assert not out.tool_calls[0].arguments_valid_json


def test_no_choices_is_malformed_but_usage_is_kept() -> None:
    out, rec, _ = run_on_fake(Case(id="1", input="[[fault:no_choices]]"))
    assert isinstance(out, AgentFailure) and out.cause == "malformed_response"
    assert "choices" in out.message
    assert rec.usage and rec.usage[0].model == "small-model"


def test_empty_content_is_an_empty_answer() -> None:
    out, _, _ = run_on_fake(Case(id="1", input="[[fault:empty_content]]"))
    assert isinstance(out, AgentOutput) and out.output == ""


def test_exhausted_rate_limit_fails_rate_limited() -> None:
    out, rec, counts = run_on_fake(Case(id="1", input="[[fault:429]]"))
    assert isinstance(out, AgentFailure) and out.cause == "rate_limited"
    assert [r.wait_s for r in rec.retries] == [0.05] * 3
    assert counts == {"429": 4}


def test_conversation_input_tool_calls_matched_to_results() -> None:
    convo = [
        {"role": "user", "content": "weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "clock", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "user", "content": "and so?"},
    ]
    out, _, _ = run_on_fake(Case(id="1", input=convo), prompt_template="Answer briefly: {input}")
    assert isinstance(out, AgentOutput)
    assert out.output == "echo: Answer briefly: and so?"
    assert out.tool_calls is not None
    assert [(c.id, c.name, c.arguments, c.result) for c in out.tool_calls] == [
        ("c1", "weather", {"city": "Paris"}, "sunny"),
        ("c2", "clock", {}, None),
    ]


def test_chat_completion_sends_params_tools_and_key_and_parses_parts() -> None:
    seen: dict[str, Any] = {}

    async def handler(request: web.Request) -> web.Response:
        seen["auth"] = request.headers.get("Authorization")
        seen["body"] = await request.json()
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
        return web.json_response({"choices": [{"message": message, "finish_reason": "stop"}]})

    async def go() -> Any:
        async with serve(handler) as base:
            client = HttpClient(FAST, headers={"Authorization": f"Bearer {KEY}"}, secrets=[KEY])
            async with client:
                rec = Recorder()
                res = await chat_completion(
                    client,
                    base + "/",
                    "m",
                    [{"role": "user", "content": "x"}],
                    rec,
                    tools=[{"type": "function", "function": TOOLS[0]}],
                    temperature=0,
                )
                return res, rec

    res, rec = asyncio.run(go())
    assert res.content == "ab" and res.usage is None and rec.usage == []
    assert seen["auth"] == f"Bearer {KEY}"
    assert seen["body"]["temperature"] == 0
    assert seen["body"]["tools"] == [{"type": "function", "function": TOOLS[0]}]


@pytest.mark.parametrize("status", [401, 500])
def test_api_key_never_in_failures_or_describe(status: int) -> None:
    async def handler(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization")
        return web.json_response({"error": f"invalid key: {auth}"}, status=status)

    async def go() -> Any:
        async with serve(handler) as base:
            agent = OpenAIChatAgent(
                base, "m", api_key=KEY, policy=FAST, params={"temperature": 0.2, "api_key": KEY}
            )
            out, rec = await _run_agent(agent, Case(id="1", input="x"))
            return agent, out, rec

    agent, out, rec = asyncio.run(go())
    assert isinstance(out, AgentFailure)
    assert out.cause == ("http_error" if status == 401 else "server_error")
    desc = agent.describe()
    assert desc["kind"] == "openai_chat" and desc["model"] == "m"
    assert desc["params"] == {"temperature": 0.2, "api_key": "[REDACTED]"}
    dumped = json.dumps([desc, out.message, str(out), [r.model_dump() for r in rec.retries]])
    assert KEY not in dumped
    assert "[REDACTED]" in out.message
