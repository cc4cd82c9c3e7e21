"""In-process capture with a real framework: PydanticAI, a scripted FunctionModel, and
PydanticAI's own OpenTelemetry instrumentation. The agent functions return only the answer."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agenteval import evaluate
from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case

Step = tuple[str, dict[str, Any]]


def scripted(steps_for: Any) -> FunctionModel:
    """A model that asks for ``steps_for(question)`` tool calls one by one, then answers."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
        steps = steps_for(question)
        turn = sum(1 for m in messages if m.kind == "response")
        if turn < len(steps):
            name, args = steps[turn]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart(f"done: {question}")])

    return FunctionModel(model)


def shop_agent(steps_for: Any, **kw: Any) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(scripted(steps_for), capabilities=[Instrumentation()], **kw)

    @agent.tool_plain
    def find_customer(name: str) -> dict[str, Any]:
        """Look a customer up."""
        if name == "nobody":
            raise ModelRetry(f"no customer named {name}")
        if name == "crash":
            raise ValueError("customer database is down")
        return {"id": len(name), "name": name}

    @agent.tool_plain
    async def count_orders(customer_id: int) -> int:
        """Orders of a customer."""
        if customer_id == 999:
            await asyncio.sleep(30)
        return customer_id * 10

    return agent


TWO_STEPS = shop_agent(
    lambda q: [("find_customer", {"name": q}), ("count_orders", {"customer_id": len(q)})]
)


def trials(cases: list[dict[str, Any]], agent: Any, tmp_path: Path, **kw: Any) -> list[Any]:
    run = evaluate(cases, agent, out=tmp_path / "run", **kw)
    return sorted(run.trials(), key=lambda r: r.case_id)


def test_two_step_trajectory_with_arguments_results_usage_and_scores(tmp_path: Path) -> None:
    def answer(case: Case) -> str:
        return TWO_STEPS.run_sync(str(case.input)).output

    case = {
        "id": "ada",
        "input": "Ada",
        "expected": "done: Ada",
        "expected_tools": ["find_customer", "count_orders"],
        "expected_trajectory": ["find_customer", "count_orders"],
    }
    (rec,) = trials([case], answer, tmp_path)
    t = rec
    assert [(c.name, c.arguments, c.result, c.error) for c in t.tool_calls] == [
        ("find_customer", {"name": "Ada"}, {"id": 3, "name": "Ada"}, None),
        ("count_orders", {"customer_id": 3}, 30, None),
    ]
    assert all(c.id and c.started_at and c.duration_s is not None for c in t.tool_calls)
    assert t.tool_calls[0].started_at < t.tool_calls[1].started_at  # type: ignore[operator]
    assert t.metadata["trajectory_source"] == "otel"
    (usage,) = t.usage
    assert usage.model == "function:model:" and usage.input_tokens > 0 and usage.output_tokens > 0
    assert t.latency.active_s is not None and 0 < t.latency.active_s < t.latency.total_s  # type: ignore[operator]
    assert t.tools is not None and {d["name"] for d in t.tools} == {"find_customer", "count_orders"}
    values = {k: s.value for k, s in rec.scores.items()}
    assert values["tool_selection"] == 1.0
    assert values["trajectory_order"] == 1.0
    assert values["tool_execution"] == 1.0
    assert values["tool_arguments_valid"] == 1.0
    assert values["redundant_calls"] == 1.0


def test_builtin_scorers_see_a_wrong_trajectory(tmp_path: Path) -> None:
    """The captured calls are what the scorers judge: order and missing tools are caught."""
    backwards = shop_agent(
        lambda q: [("count_orders", {"customer_id": 1}), ("find_customer", {"name": q})]
    )

    def answer(case: Case) -> str:
        return f"{backwards.run_sync(str(case.input)).output} has 77 orders"

    case = {
        "id": "x",
        "input": "Ada",
        "expected_tools": ["find_customer", "count_orders", "refund"],
        "expected_trajectory": ["find_customer", "count_orders"],
    }
    (rec,) = trials([case], answer, tmp_path)
    s = rec.scores
    assert s["tool_selection"].value == 0.0
    assert s["tool_selection"].reason == "never called refund (needed 1)"
    assert s["trajectory_order"].value == 0.0
    assert s["tool_execution"].value == 1.0
    assert s["tool_faithfulness"].value == 0.0  # 77 is in no tool result


def test_model_retry_is_a_tool_error_then_the_retried_call(tmp_path: Path) -> None:
    agent = shop_agent(
        lambda q: [("find_customer", {"name": "nobody"}), ("find_customer", {"name": q})]
    )

    def answer(case: Case) -> str:
        return agent.run_sync(str(case.input)).output

    case = {"id": "r", "input": "Ada", "expected_tools": ["find_customer"]}
    (rec,) = trials([case], answer, tmp_path)
    first, second = rec.tool_calls
    assert (first.arguments, first.result) == ({"name": "nobody"}, None)
    assert first.error == "ToolRetryError: no customer named nobody"
    assert (second.result, second.error) == ({"id": 3, "name": "Ada"}, None)
    assert rec.scores["tool_execution"].value == 0.0
    assert "#1 find_customer: ToolRetryError" in rec.scores["tool_execution"].reason
    assert rec.scores["redundant_calls"].value == 1.0
    assert rec.scores["tool_selection"].value == 1.0


def test_invalid_arguments_are_a_call_with_the_validation_error(tmp_path: Path) -> None:
    agent = shop_agent(
        lambda q: [("count_orders", {"customer_id": "many"}), ("count_orders", {"customer_id": 2})]
    )

    def answer(case: Case) -> str:
        return agent.run_sync(str(case.input)).output

    (rec,) = trials([{"id": "v", "input": "Ada"}], answer, tmp_path)
    bad, good = rec.tool_calls
    assert bad.arguments == {"customer_id": "many"} and bad.result is None
    assert bad.error is not None and bad.error.startswith("ValidationError: 1 validation error")
    assert (good.result, good.error) == (20, None)
    s = rec.scores["tool_arguments_valid"]
    assert s.value == 0.0 and "#1 count_orders: at $.customer_id" in s.reason
    assert rec.scores["tool_execution"].value == 1.0  # the invalid call is left to the above


def test_retries_exhausted_fail_the_trial_with_the_calls_kept(tmp_path: Path) -> None:
    agent = shop_agent(lambda q: [("find_customer", {"name": "nobody"})] * 2)

    def answer(case: Case) -> str:
        return agent.run_sync(str(case.input)).output

    (rec,) = trials([{"id": "r", "input": "Ada"}], answer, tmp_path)
    t = rec
    assert t.failure is not None and t.failure.cause == "agent_error"
    assert "UnexpectedModelBehavior" in t.failure.message
    first, second = t.tool_calls
    assert first.error == "ToolRetryError: no customer named nobody"
    assert second.error is not None
    assert second.error.startswith("UnexpectedModelBehavior: Tool 'find_customer' exceeded max")


def test_a_tool_that_raises_fails_the_trial_and_keeps_the_calls_before(tmp_path: Path) -> None:
    agent = shop_agent(
        lambda q: [("find_customer", {"name": q}), ("find_customer", {"name": "crash"})]
    )

    def answer(case: Case) -> str:
        return agent.run_sync(str(case.input)).output

    (rec,) = trials([{"id": "c", "input": "Ada"}], answer, tmp_path)
    t = rec
    assert t.failure is not None and t.failure.cause == "agent_error"
    assert t.failure.message == "ValueError: customer database is down"
    assert t.metadata["trajectory_source"] == "otel"  # where the failed trial's calls came from
    ok, bad = t.tool_calls
    assert (ok.result, ok.error) == ({"id": 3, "name": "Ada"}, None)
    assert (bad.arguments, bad.result) == ({"name": "crash"}, None)
    assert bad.error == "ValueError: customer database is down"
    assert t.usage and t.usage[0].input_tokens > 0
    assert rec.scores["tool_execution"].value == 0.0


def test_timeout_keeps_the_finished_call_and_marks_the_open_one(tmp_path: Path) -> None:
    agent = shop_agent(
        lambda q: [("find_customer", {"name": q}), ("count_orders", {"customer_id": 999})]
    )

    async def answer(case: Case) -> str:
        return (await agent.run(str(case.input))).output

    (rec,) = trials([{"id": "t", "input": "Ada"}], answer, tmp_path, timeout=1.0)
    t = rec
    assert t.failure is not None and t.failure.cause == "timeout"
    done, cut = t.tool_calls
    assert (done.name, done.result, done.error) == ("find_customer", {"id": 3, "name": "Ada"}, None)
    assert cut.name == "count_orders" and cut.arguments == {"customer_id": 999}
    assert cut.result is None and cut.error is not None
    assert cut.error.startswith(("CancelledError", "unfinished")), cut.error


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_concurrent_trials_never_mix(tmp_path: Path, kind: str) -> None:
    def answer_sync(case: Case) -> str:
        return TWO_STEPS.run_sync(str(case.input)).output

    async def answer_async(case: Case) -> str:
        return (await TWO_STEPS.run(str(case.input))).output

    cases = [{"id": f"c{i:02d}", "input": "x" * (i + 1)} for i in range(20)]
    agent = answer_sync if kind == "sync" else answer_async
    recs = trials(cases, agent, tmp_path, concurrency=8)
    assert len(recs) == 20
    for i, rec in enumerate(recs):
        name = "x" * (i + 1)
        calls = rec.tool_calls
        assert [(c.name, c.arguments) for c in calls] == [
            ("find_customer", {"name": name}),
            ("count_orders", {"customer_id": i + 1}),
        ], rec.case_id
        assert calls[1].result == (i + 1) * 10
        assert len({c.id for c in calls}) == 2
        assert rec.usage[0].input_tokens > 0


def test_calls_the_agent_returns_win_and_its_usage_is_not_doubled(tmp_path: Path) -> None:
    def answer(case: Case) -> dict[str, Any]:
        TWO_STEPS.run_sync(str(case.input))
        return {
            "output": "mine",
            "tool_calls": [{"name": "my_tool", "arguments": {}}],
            "usage": {"model": "m", "input_tokens": 1, "output_tokens": 2},
        }

    (rec,) = trials([{"id": "a", "input": "Ada"}], answer, tmp_path)
    t = rec
    assert [c.name for c in t.tool_calls] == ["my_tool"]
    assert "trajectory_source" not in t.metadata
    assert [(u.model, u.input_tokens, u.output_tokens) for u in t.usage] == [("m", 1, 2)]


def test_capture_off_records_nothing(tmp_path: Path) -> None:
    def answer(case: Case) -> str:
        return TWO_STEPS.run_sync(str(case.input)).output

    agent = PythonAgent(answer, capture="off")
    (rec,) = trials([{"id": "a", "input": "Ada"}], agent, tmp_path)
    assert rec.tool_calls == [] and rec.usage == []
    assert "trajectory_source" not in rec.metadata


_USER_PROVIDER = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
if sys.argv[1] == "user":
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

sys.path.insert(0, sys.argv[2])
from agent_mod import answer
from agenteval import evaluate

run = evaluate([{"id": "a", "input": "Ada"}], answer)
(rec,) = run.trials()
print(json.dumps({
    "calls": [c.name for c in rec.tool_calls],
    "exported": sorted(s.name for s in exporter.get_finished_spans()),
    "user_provider_kept": sys.argv[1] != "user" or trace.get_tracer_provider() is provider,
    "provider": type(trace.get_tracer_provider()).__module__,
}))
"""

_AGENT_MOD = """
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

Agent.instrument_all()

def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("ping", {"n": 1})])
    return ModelResponse(parts=[TextPart("pong")])

agent = Agent(FunctionModel(model))

@agent.tool_plain
def ping(n: int) -> int:
    return n

def answer(case):
    return agent.run_sync(case.input).output
"""


@pytest.mark.parametrize("setup", ["user", "none"])
def test_users_provider_and_exporters_are_kept(tmp_path: Path, setup: str) -> None:
    """With the user's SDK provider, their exporter still gets every span and the provider
    stays theirs; with none, agenteval installs an SDK provider and still captures."""
    (tmp_path / "agent_mod.py").write_text(textwrap.dedent(_AGENT_MOD), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", _USER_PROVIDER, setup, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["calls"] == ["ping"]
    assert got["user_provider_kept"] is True
    assert got["provider"] == "opentelemetry.sdk.trace"
    if setup == "user":
        assert "execute_tool ping" in got["exported"] and "invoke_agent agent" in got["exported"]
