"""Capture with the real OpenAI Agents SDK against the fake server's scripted Responses API.

The agent functions return only the answer; the tool calls, their arguments, results and
errors, and the token usage come from agenteval's trace processor. No OpenAI API key is in
the environment, so the SDK's own exporter uploads nothing (it logs that it skipped)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from doc_samples import shown_usage

pytest.importorskip("agents")

from openai import AsyncOpenAI

from agenteval import evaluate
from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.traces.capture import Captures, capture_source
from agenteval.traces.openai_agents import OpenAIAgentsCapture
from agenteval.traces.records import Trajectory
from agenteval.trials.trial import ToolCall, Usage
from agents import Agent, OpenAIResponsesModel, Runner, function_tool
from fake_server_util import fake_server_process

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agents"


@pytest.fixture(autouse=True)
def _no_export_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with fake_server_process() as url:
        yield url


@function_tool
def find_customer(name: str) -> str:
    """Look a customer up."""
    if name == "crash":
        raise ValueError("customer database is down")
    return json.dumps({"id": len(name), "name": name})


@function_tool
def count_orders(customer_id: int) -> int:
    """Orders of a customer."""
    return customer_id * 10


@function_tool(failure_error_function=None)
def refund(order: int) -> str:
    """Refund an order (its errors end the run)."""
    raise RuntimeError(f"refunds are closed (order {order})")


def shop(base_url: str) -> Agent[Any]:
    model = OpenAIResponsesModel("gpt-fake", AsyncOpenAI(base_url=base_url, api_key="test"))
    return Agent(
        name="shop", instructions="Help.", tools=[find_customer, count_orders, refund], model=model
    )


def script(*calls: tuple[str, dict[str, Any]]) -> str:
    return " ".join(f"[[call:{name} {json.dumps(args)}]]" for name, args in calls)


def two_steps(name: str) -> str:
    return f"{name}? " + script(
        ("find_customer", {"name": name}), ("count_orders", {"customer_id": len(name)})
    )


def trials(cases: list[dict[str, Any]], agent: Any, tmp_path: Path, **kw: Any) -> list[Any]:
    run = evaluate(cases, agent, out=tmp_path / "run", **kw)
    return sorted(run.trials(), key=lambda r: r.case_id)


def test_two_step_trajectory_with_arguments_results_usage_and_scores(
    tmp_path: Path, base_url: str
) -> None:
    agent = shop(base_url)

    def answer(case: Case) -> str:
        return str(Runner.run_sync(agent, str(case.input)).final_output)

    case = {
        "id": "ada",
        "input": two_steps("Ada"),
        "expected": "echo: 30",
        "expected_tools": ["find_customer", "count_orders"],
        "expected_trajectory": ["find_customer", "count_orders"],
    }
    (rec,) = trials([case], answer, tmp_path)
    assert rec.output == "echo: 30"
    assert [(c.name, c.arguments, c.result, c.error) for c in rec.tool_calls] == [
        ("find_customer", {"name": "Ada"}, {"id": 3, "name": "Ada"}, None),
        ("count_orders", {"customer_id": 3}, 30, None),
    ]
    assert all(c.started_at and c.duration_s is not None for c in rec.tool_calls)
    assert rec.tool_calls[0].started_at < rec.tool_calls[1].started_at  # type: ignore[operator]
    # the ids the model gave the calls (the response's function_call items): function
    # spans carry none
    assert [c.id for c in rec.tool_calls] == ["call_1", "call_2"]
    assert rec.metadata["trajectory_source"] == "openai-agents"
    # the tools the request offered, echoed by the response
    assert rec.tools is not None
    tools = {d["name"]: d for d in rec.tools}
    assert set(tools) == {"find_customer", "count_orders", "refund"}
    assert tools["count_orders"]["description"] == "Orders of a customer."
    assert tools["count_orders"]["parameters"]["properties"]["customer_id"]["type"] == "integer"
    (usage,) = rec.usage
    # three model turns; the fake server counts words: 1 + 1 output tokens for the calls,
    # 2 for "echo: 30"
    assert (usage.model, usage.output_tokens) == ("gpt-fake", 4)
    assert usage.input_tokens > 0
    assert rec.latency.active_s is not None and 0 < rec.latency.active_s < rec.latency.total_s
    values = {k: s.value for k, s in rec.scores.items()}
    assert values["tool_selection"] == 1.0
    assert values["trajectory_order"] == 1.0
    assert values["tool_execution"] == 1.0
    assert values["tool_arguments_valid"] == 1.0
    assert values["tool_faithfulness"] == 1.0  # 30 is a tool result


def test_bad_arguments_are_judged_against_the_captured_tools(tmp_path: Path, base_url: str) -> None:
    """The SDK rejects the call itself; tool_arguments_valid names the bad field."""
    agent = shop(base_url)

    async def answer(case: Case) -> str:
        return str((await Runner.run(agent, str(case.input))).final_output)

    case = {"id": "b", "input": script(("count_orders", {"customer_id": "many"}))}
    (rec,) = trials([case], answer, tmp_path)
    (call,) = rec.tool_calls
    assert (call.id, call.arguments) == ("call_1", {"customer_id": "many"})
    assert call.result is None and call.error is not None
    s = rec.scores["tool_arguments_valid"]
    assert s.value == 0.0 and "#1 count_orders: at $.customer_id" in s.reason  # type: ignore[operator]


@function_tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {len(query)}"


def test_chat_completions_calls_get_the_models_ids(tmp_path: Path, base_url: str) -> None:
    """Generation spans (chat completions): the call id comes from their output messages.
    The fake server's ``tool_call`` fault makes one call of the first tool, then answers."""
    from agents import OpenAIChatCompletionsModel

    model = OpenAIChatCompletionsModel("gpt-fake", AsyncOpenAI(base_url=base_url, api_key="t"))
    agent = Agent(name="chat", tools=[lookup], model=model)

    async def answer(case: Case) -> str:
        return str((await Runner.run(agent, str(case.input))).final_output)

    question = f"chat-ids-{os.getpid()} [[fault:tool_call:1]]"
    (rec,) = trials([{"id": "c", "input": question}], answer, tmp_path)
    (call,) = rec.tool_calls
    assert call.name == "lookup" and call.arguments == {"query": question}
    assert call.result == f"found {len(question)}"
    assert call.id is not None and re.fullmatch(r"call_\d+", call.id), call.id
    assert rec.output == f"echo: found {len(question)}"
    assert rec.tools is None  # generation spans do not carry the tools offered


def test_scorers_see_a_wrong_trajectory(tmp_path: Path, base_url: str) -> None:
    agent = shop(base_url)

    def answer(case: Case) -> str:
        return f"{Runner.run_sync(agent, str(case.input)).final_output}, and 77 orders"

    case = {
        "id": "x",
        "input": "Ada "
        + script(("count_orders", {"customer_id": 1}), ("find_customer", {"name": "Ada"})),
        "expected_tools": ["find_customer", "count_orders", "refund"],
        "expected_trajectory": ["find_customer", "count_orders"],
    }
    (rec,) = trials([case], answer, tmp_path)
    s = rec.scores
    assert [c.name for c in rec.tool_calls] == ["count_orders", "find_customer"]
    assert s["tool_selection"].value == 0.0
    assert s["tool_selection"].reason == "never called refund (needed 1)"
    assert s["trajectory_order"].value == 0.0
    assert s["tool_execution"].value == 1.0
    faithful = s["tool_faithfulness"]  # the echoed id 3 is a tool result, 77 is not
    assert faithful.value == 0.5 and faithful.reason.endswith("not found: 77")  # type: ignore[union-attr]


def test_a_tool_that_raises_is_a_call_with_an_error(tmp_path: Path, base_url: str) -> None:
    """The SDK's default: the error goes back to the model and the run goes on."""
    agent = shop(base_url)

    def answer(case: Case) -> str:
        return str(Runner.run_sync(agent, str(case.input)).final_output)

    case = {
        "id": "c",
        "input": script(("find_customer", {"name": "crash"}), ("count_orders", {"customer_id": 2})),
    }
    (rec,) = trials([case], answer, tmp_path)
    assert rec.failure is None
    bad, good = rec.tool_calls
    assert (bad.name, bad.arguments, bad.result) == ("find_customer", {"name": "crash"}, None)
    assert bad.error is not None and bad.error.startswith("Error running tool"), bad.error
    assert (good.name, good.result, good.error) == ("count_orders", 20, None)
    execution = rec.scores["tool_execution"]
    assert execution.value == 0.0 and execution.reason.startswith("1 of 2 calls")  # type: ignore[union-attr]


def test_a_fatal_tool_error_fails_the_trial_and_keeps_the_calls_before(
    tmp_path: Path, base_url: str
) -> None:
    agent = shop(base_url)

    async def answer(case: Case) -> str:
        return str((await Runner.run(agent, str(case.input))).final_output)

    case = {"id": "r", "input": two_steps("Bo") + " " + script(("refund", {"order": 7}))}
    (rec,) = trials([case], answer, tmp_path)
    assert rec.failure is not None and rec.failure.cause == "agent_error"
    assert "refunds are closed" in rec.failure.message
    assert [(c.name, c.error is None) for c in rec.tool_calls] == [
        ("find_customer", True),
        ("count_orders", True),
        ("refund", False),
    ]
    assert rec.tool_calls[1].result == 20
    assert rec.usage and rec.usage[0].model == "gpt-fake"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_concurrent_trials_never_mix(tmp_path: Path, base_url: str, kind: str) -> None:
    agent = shop(base_url)

    def answer_sync(case: Case) -> str:
        # one client per call: an AsyncOpenAI client is bound to the event loop it first
        # ran on, and each run_sync thread has its own loop
        return str(Runner.run_sync(shop(base_url), str(case.input)).final_output)

    async def answer_async(case: Case) -> str:
        return str((await Runner.run(agent, str(case.input))).final_output)

    cases = [{"id": f"c{i:02d}", "input": two_steps("x" * (i + 1))} for i in range(12)]
    recs = trials(cases, answer_sync if kind == "sync" else answer_async, tmp_path, concurrency=6)
    assert len(recs) == 12
    for i, rec in enumerate(recs):
        name = "x" * (i + 1)
        assert [(c.name, c.arguments, c.result) for c in rec.tool_calls] == [
            ("find_customer", {"name": name}, {"id": i + 1, "name": name}),
            ("count_orders", {"customer_id": i + 1}, (i + 1) * 10),
        ], rec.case_id
        assert rec.output == f"echo: {(i + 1) * 10}"
        assert rec.usage[0].output_tokens == 4


def test_capture_off_records_nothing(tmp_path: Path, base_url: str) -> None:
    agent = shop(base_url)

    def answer(case: Case) -> str:
        return str(Runner.run_sync(agent, str(case.input)).final_output)

    off = PythonAgent(answer, capture="off")
    (rec,) = trials([{"id": "a", "input": two_steps("Al")}], off, tmp_path)
    assert rec.output == "echo: 20"
    assert rec.tool_calls == [] and rec.usage == []


def test_capture_modes() -> None:
    assert isinstance(capture_source("openai-agents"), OpenAIAgentsCapture)
    auto = capture_source("auto")
    assert isinstance(auto, Captures | OpenAIAgentsCapture)
    with pytest.raises(InputError, match="capture must be one of"):
        capture_source("langfuse")


def _cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [
        {
            "id": "ada",
            "input": two_steps("Ada"),
            "expected_trajectory": ["find_customer", "count_orders"],
        },
        {"id": "bad", "input": script(("find_customer", {"name": "crash"}))},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


_AGENT_FILE = '''
import json, os
from agents import Agent, OpenAIResponsesModel, Runner, function_tool
from openai import AsyncOpenAI

@function_tool
def find_customer(name: str) -> str:
    """Look a customer up."""
    if name == "crash":
        raise ValueError("customer database is down")
    return json.dumps({"id": len(name), "name": name})

@function_tool
def count_orders(customer_id: int) -> int:
    """Orders of a customer."""
    return customer_id * 10

client = AsyncOpenAI(base_url=os.environ["SHOP_BASE_URL"], api_key="test")
agent = Agent(name="shop", tools=[find_customer, count_orders],
              model=OpenAIResponsesModel("gpt-fake", client))

async def answer(case):
    return (await Runner.run(agent, case.input)).final_output
'''


@pytest.mark.parametrize("mode", ["auto", "openai-agents"])
def test_cli_records_the_sdk_calls(tmp_path: Path, base_url: str, cli: Any, mode: str) -> None:
    (tmp_path / "sdk_shop.py").write_text(_AGENT_FILE, encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env["SHOP_BASE_URL"] = base_url
    proc = cli(
        "run", _cases_file(tmp_path), "--agent", "sdk_shop:answer",
        "--out", tmp_path / "run", "--capture", mode, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = (tmp_path / "run" / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    got = {t["case_id"]: t for t in map(json.loads, lines)}
    ada, bad = got["ada"], got["bad"]
    assert [(c["name"], c["arguments"], c["result"]) for c in ada["tool_calls"]] == [
        ("find_customer", {"name": "Ada"}, {"id": 3, "name": "Ada"}),
        ("count_orders", {"customer_id": 3}, 30),
    ]
    assert ada["metadata"]["trajectory_source"] == "openai-agents"
    assert ada["usage"][0]["model"] == "gpt-fake"
    (call,) = bad["tool_calls"]
    assert call["name"] == "find_customer" and call["error"].startswith("Error running tool")


_NO_UPLOAD = """\
from agents.tracing import processors

processors.default_exporter().export = lambda items: None
"""

_BLOCK = re.compile(r"(?:Save as `(\S+)`:\n\n)?```(\w+)\n(.*?)```", re.S)


def test_docs_page_runs_and_records_every_call(tmp_path: Path, base_url: str, cli: Any) -> None:
    """docs/agents/openai-agents.md as written: its files, its command."""
    commands, files = [], []
    for name, lang, body in _BLOCK.findall((DOCS / "openai-agents.md").read_text("utf-8")):
        if name:
            (tmp_path / name).write_text(body, encoding="utf-8")
            files.append(name)
        elif lang == "sh":
            commands += [ln.split() for ln in body.splitlines() if ln.startswith("agenteval ")]
    assert files == ["shop_agent.py", "cases.jsonl"] and len(commands) == 1
    # The page's client needs a key, and with a key the SDK's own exporter would upload the
    # traces to OpenAI: a test-only sitecustomize makes that exporter drop them, so nothing
    # leaves this machine (agenteval's processor is separate and unaffected).
    site = tmp_path / "_site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_NO_UPLOAD, encoding="utf-8")
    path = [str(tmp_path), str(site), os.environ.get("PYTHONPATH", "")]
    env = {"PYTHONPATH": os.pathsep.join(path)}
    env["OPENAI_BASE_URL"] = base_url
    env["OPENAI_API_KEY"] = "test"
    proc = cli(*commands[0][1:], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = tmp_path / commands[0][commands[0].index("--out") + 1]
    lines = (out / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    got = {t["case_id"]: t for t in map(json.loads, lines)}
    assert set(got) == {"ada", "grace"}
    for name, orders in (("Ada", 30), ("Grace", 50)):
        t = got[name.lower()]
        assert t["output"] == f"echo: {orders}"
        assert [(c["name"], c["arguments"]) for c in t["tool_calls"]] == [
            ("find_customer", {"name": name}),
            ("count_orders", {"customer_id": len(name)}),
        ]
        assert t["tool_calls"][1]["result"] == orders
        assert [c["id"] for c in t["tool_calls"]] == ["call_1", "call_2"]
        assert {d["name"] for d in t["tools"]} == {"find_customer", "count_orders"}
        assert t["scores"]["trajectory_order"]["value"] == 1.0
        assert t["scores"]["tool_arguments_valid"]["value"] == 1.0
        assert t["usage"][0]["model"] == "gpt-4o-mini"
        if name == "Ada":  # the page shows the token counts recorded
            assert t["usage"] == shown_usage(DOCS / "openai-agents.md", "ada")


def test_the_users_processors_keep_receiving_spans(tmp_path: Path, base_url: str) -> None:
    from agents.tracing import TracingProcessor

    from agents import add_trace_processor

    ended: list[str] = []

    class Mine(TracingProcessor):
        def on_trace_start(self, trace: Any) -> None: ...
        def on_trace_end(self, trace: Any) -> None: ...
        def on_span_start(self, span: Any) -> None: ...
        def on_span_end(self, span: Any) -> None:
            ended.append(span.span_data.type)

        def shutdown(self) -> None: ...
        def force_flush(self) -> None: ...

    add_trace_processor(Mine())
    agent = shop(base_url)

    async def answer(case: Case) -> str:
        return str((await Runner.run(agent, str(case.input))).final_output)

    (rec,) = trials([{"id": "a", "input": two_steps("Al")}], answer, tmp_path)
    assert len(rec.tool_calls) == 2
    assert ended.count("function") == 2 and ended.count("response") == 3


def test_sdk_tracing_disabled_means_nothing_is_seen(tmp_path: Path, base_url: str) -> None:
    from agents import set_tracing_disabled

    agent = shop(base_url)

    async def answer(case: Case) -> str:
        return str((await Runner.run(agent, str(case.input))).final_output)

    set_tracing_disabled(True)
    try:
        (rec,) = trials([{"id": "a", "input": two_steps("Al")}], answer, tmp_path)
    finally:
        set_tracing_disabled(False)
    assert rec.output == "echo: 20" and rec.tool_calls == [] and rec.usage == []


def test_explicit_mode_without_the_sdk_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import agenteval.traces.openai_agents as oa

    monkeypatch.setattr(oa, "sdk_available", lambda: False)
    with pytest.raises(InputError, match=r"pip install -e '\.\[openai-agents\]'"):
        capture_source("openai-agents")


def test_auto_does_not_import_the_sdk_for_an_agent_that_does_not_use_it(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from agenteval import evaluate\n"
        "run = evaluate([{'id': 'a', 'input': 'hi'}], lambda case: 'ok', out=sys.argv[1])\n"
        "assert [t.output for t in run.trials()] == ['ok']\n"
        "print('agents' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "run")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


class _Source:
    def __init__(self, name: str, traj: Trajectory) -> None:
        self.name, self.traj = name, traj

    @contextmanager
    def trial(self) -> Iterator[Any]:
        yield self

    def trajectory(self) -> Trajectory:
        return self.traj


def test_captures_take_one_source_per_trial_never_a_mix() -> None:
    sdk_call, otel_call = ToolCall(name="from_sdk"), ToolCall(name="from_otel")
    usage_only = Trajectory(usage=[Usage(model="m", input_tokens=1, output_tokens=1)])
    cases = [
        ((Trajectory(tool_calls=[sdk_call]), Trajectory(tool_calls=[otel_call])), "openai-agents"),
        ((usage_only, Trajectory(tool_calls=[otel_call])), "otel"),
        ((usage_only, Trajectory()), "openai-agents"),
    ]
    for (a, b), want in cases:
        both = Captures([_Source("openai-agents", a), _Source("otel", b)])
        with both.trial() as t:
            pass
        assert t.source == want
        assert t.trajectory() is (a if want == "openai-agents" else b)


def test_fake_responses_rejects_a_bad_script(base_url: str) -> None:
    import urllib.error
    import urllib.request

    for body in ({"model": "m", "input": "[[call:f [1, 2]]]"}, {"model": "m", "input": 3}):
        req = urllib.request.Request(
            f"{base_url}/responses",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        assert e.value.code == 400
        assert "bad Responses API request" in e.value.read().decode()
