"""Capture with a real LangGraph agent (``tests/traces/langgraph_shop.py``): a scripted chat
model, real LangChain tools, and only OpenInference's LangChain instrumentation switched on.
The agent functions return only the answer; everything else comes from the spans. Each run
goes through the real ``agenteval run`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("openinference.instrumentation.langchain")

HERE = Path(__file__).resolve().parent


def script(*calls: tuple[str, dict[str, Any]]) -> str:
    return " ".join(f"[[call:{name} {json.dumps(args)}]]" for name, args in calls)


def _mixed(i: int) -> dict[str, Any]:
    """Case i: its own tools, order and arguments, so mixed-up trials would show."""
    if i % 2 == 0:
        name = "x" * (i + 1)
        steps = [("find_customer", {"name": name}), ("count_orders", {"customer_id": i + 1})]
    else:
        steps = [("refund", {"order": i, "reason": f"r{i}"}), ("count_orders", {"customer_id": i})]
    names = [n for n, _ in steps]
    return {
        "id": f"m{i:02d}",
        "input": script(*steps),
        "expected_tools": names,
        "expected_trajectory": names,
        "_steps": steps,
    }


MIXED = [_mixed(i) for i in range(12)]
CASES: list[dict[str, Any]] = [
    {
        "id": "ada",
        "input": "How many orders has Ada? "
        + script(("find_customer", {"name": "Ada"}), ("count_orders", {"customer_id": 3})),
        "expected": "done: 30",
        "expected_tools": ["find_customer", "count_orders"],
        "expected_trajectory": ["find_customer", "count_orders"],
    },
    {
        "id": "backwards",
        "input": script(("count_orders", {"customer_id": 1}), ("find_customer", {"name": "Bo"})),
        "expected_tools": ["find_customer", "count_orders", "refund"],
        "expected_trajectory": ["find_customer", "count_orders"],
    },
    {"id": "crash", "input": script(("find_customer", {"name": "crash"}))},
    {
        "id": "forgiving",
        "input": "[[forgiving]] "
        + script(("find_customer", {"name": "crash"}), ("count_orders", {"customer_id": 2})),
    },
    {"id": "reported", "input": script(("refund", {"order": 0, "reason": "late"}))},
    {
        "id": "escalate",
        "input": script(("find_customer", {"name": "Cy"}), ("escalate_to_agent", {"topic": "x"})),
        "expected_tools": ["find_customer", "escalate_to_agent"],
    },
    {
        "id": "docs",
        "input": "[[docs]] " + script(("search_docs", {"query": "refunds"})),
        "relevant_docs": ["policy-refunds", "policy-shipping"],
    },
    *({k: v for k, v in c.items() if k != "_steps"} for c in MIXED),
]


def _env(extra: Path | None = None) -> dict[str, str]:
    path = [str(HERE), os.environ.get("PYTHONPATH", "")]
    if extra is not None:
        path.insert(0, str(extra))
    return {"PYTHONPATH": os.pathsep.join(path)}


@pytest.fixture(scope="module", params=["answer", "aanswer"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One ``agenteval run --concurrency 8`` over every case (sync, then async agent)."""
    tmp = tmp_path_factory.mktemp(request.param)
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    agent = f"langgraph_shop:{request.param}"
    args = ["run", str(cases), "--agent", agent, "--out", str(tmp / "run"), "--concurrency", "8"]
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        capture_output=True,
        text=True,
        cwd=tmp,
        env={**os.environ, **_env()},
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = (tmp / "run" / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    return {t["case_id"]: t for t in map(json.loads, lines)}


def _calls(t: dict[str, Any]) -> list[tuple[str, Any, Any, Any]]:
    return [(c["name"], c["arguments"], c["result"], c["error"]) for c in t["tool_calls"]]


def _scores(t: dict[str, Any]) -> dict[str, Any]:
    return {k: v["value"] for k, v in t["scores"].items()}


def test_two_step_trajectory_with_ids_usage_tools_and_scores(run: Any) -> None:
    t = run["ada"]
    assert t["output"] == "done: 30" and t["failure"] is None
    # find_customer's one string argument: OpenInference records it as the bare string
    # "Ada"; the call's arguments come from the model's tool call with the same id
    assert _calls(t) == [
        ("find_customer", {"name": "Ada"}, {"id": 3, "name": "Ada"}, None),
        ("count_orders", {"customer_id": 3}, 30, None),
    ]
    length = len(CASES[0]["input"])
    assert [c["id"] for c in t["tool_calls"]] == [f"call_0_{length}", f"call_1_{length}"]
    assert all(c["started_at"] and c["duration_s"] >= 0 for c in t["tool_calls"])
    assert t["tool_calls"][0]["started_at"] < t["tool_calls"][1]["started_at"]
    assert t["metadata"]["trajectory_source"] == "otel"
    (usage,) = t["usage"]
    assert usage["model"] == "scripted-1"
    assert usage["output_tokens"] == 6  # three model turns, 2 tokens each
    assert usage["input_tokens"] > 0
    assert 0 < t["latency"]["active_s"] < t["latency"]["total_s"]
    tools = {d["name"]: d for d in t["tools"]}
    assert set(tools) == {"find_customer", "count_orders", "refund", "escalate_to_agent"} | {
        "search_docs"
    }
    assert tools["count_orders"]["parameters"]["properties"] == {"customer_id": {"type": "integer"}}
    assert tools["find_customer"]["description"] == "Look a customer up by first name."
    s = _scores(t)
    for name in (
        "exact_match",
        "tool_selection",
        "trajectory_order",
        "tool_arguments_valid",
        "tool_execution",
        "tool_faithfulness",
        "redundant_calls",
    ):
        assert s[name] == 1.0, (name, t["scores"][name])


def test_scorers_see_a_wrong_trajectory(run: Any) -> None:
    t = run["backwards"]
    assert [c["name"] for c in t["tool_calls"]] == ["count_orders", "find_customer"]
    s = t["scores"]
    assert s["tool_selection"]["value"] == 0.0
    assert s["tool_selection"]["reason"] == "never called refund (needed 1)"
    assert s["trajectory_order"]["value"] == 0.0
    assert s["tool_execution"]["value"] == 1.0
    assert t["output"] == 'done: {"id": 2, "name": "Bo"}'
    assert s["tool_faithfulness"]["value"] == 1.0


def test_a_tool_that_raises_ends_the_run_and_is_kept_as_an_error(run: Any) -> None:
    t = run["crash"]
    assert t["failure"]["cause"] == "agent_error"
    assert t["failure"]["message"] == "ValueError: customer database is down"
    assert _calls(t) == [
        ("find_customer", {"name": "crash"}, None, "ValueError: customer database is down")
    ]
    assert t["tool_calls"][0]["id"] == f"call_0_{len(CASES[2]['input'])}"
    assert t["usage"][0]["model"] == "scripted-1"
    assert t["scores"]["tool_execution"]["value"] == 0.0


def test_a_handled_tool_error_is_an_error_and_the_run_goes_on(run: Any) -> None:
    """create_react_agent with handle_tool_errors=True: the error goes back to the model."""
    t = run["forgiving"]
    assert t["failure"] is None and t["output"] == "done: 20"
    assert _calls(t) == [
        ("find_customer", {"name": "crash"}, None, "ValueError: customer database is down"),
        ("count_orders", {"customer_id": 2}, 20, None),
    ]
    execution = t["scores"]["tool_execution"]
    assert execution["value"] == 0.0 and execution["reason"].startswith("1 of 2 calls")


def test_an_error_the_tool_reports_itself_is_an_error(run: Any) -> None:
    """A ToolException with handle_tool_error: the span is OK, its ToolMessage says error."""
    t = run["reported"]
    assert t["failure"] is None
    assert _calls(t) == [("refund", {"order": 0, "reason": "late"}, None, "no such order")]
    assert t["scores"]["tool_execution"]["value"] == 0.0


def test_a_tool_whose_name_says_agent_is_still_a_tool(run: Any) -> None:
    """OpenInference marks every run with "agent" in its name AGENT, tools included."""
    t = run["escalate"]
    assert _calls(t) == [
        ("find_customer", {"name": "Cy"}, {"id": 2, "name": "Cy"}, None),
        ("escalate_to_agent", {"topic": "x"}, "ticket opened: x", None),
    ]
    assert t["scores"]["tool_selection"]["value"] == 1.0


def test_retrieved_documents_feed_retrieval_recall(run: Any) -> None:
    t = run["docs"]
    retrieval, tool_call = t["tool_calls"]
    # the retriever asked directly: a call named after it, its documents as the result
    assert retrieval["name"] == "PolicyRetriever"
    assert retrieval["arguments"] == {"query": CASES[6]["input"]}
    assert retrieval["result"] == [
        {"content": "Refunds take 5 days.", "metadata": {"doc_id": "policy-refunds"}},
        {"content": "Orders ship in 2 days.", "metadata": {"doc_id": "policy-shipping"}},
    ]
    # the retriever wrapped as a tool: one call, the tool's (the nested retriever span is
    # not a second call), its result the text the model got
    assert tool_call["name"] == "search_docs"
    assert tool_call["arguments"] == {"query": "refunds"}
    assert tool_call["result"] == (
        "[policy-refunds] Refunds take 5 days.\n\n[policy-shipping] Orders ship in 2 days."
    )
    assert t["scores"]["retrieval_recall"]["value"] == 1.0


def test_concurrent_trials_never_mix(run: Any) -> None:
    for case in MIXED:
        t = run[case["id"]]
        steps = case["_steps"]
        assert [(c["name"], c["arguments"]) for c in t["tool_calls"]] == steps, case["id"]
        assert all(c["error"] is None for c in t["tool_calls"])
        assert len({c["id"] for c in t["tool_calls"]}) == 2
        assert t["usage"][0]["output_tokens"] == 6
        s = _scores(t)
        for name in ("tool_selection", "trajectory_order", "tool_execution", "tool_faithfulness"):
            assert s[name] == 1.0, (case["id"], name, t["scores"][name])


_USER_PROVIDER = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.langchain import LangChainInstrumentor

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
LangChainInstrumentor().instrument(tracer_provider=provider)  # as OpenInference's docs do

import langgraph_shop  # instruments again: a no-op, the instrumentor is a singleton
from agenteval import evaluate

run = evaluate([{"id": "a", "input": sys.argv[1]}], langgraph_shop.answer, out=sys.argv[2])
(rec,) = run.trials()
print(json.dumps({
    "calls": [c.name for c in rec.tool_calls],
    "exported": sorted({s.name for s in exporter.get_finished_spans()}),
    "provider_kept": trace.get_tracer_provider() is provider,
}))
"""


def test_the_users_provider_and_exporter_are_kept(tmp_path: Path) -> None:
    question = script(("find_customer", {"name": "Ada"}))
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_USER_PROVIDER), question, str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **_env()},
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["calls"] == ["find_customer"]
    assert got["provider_kept"] is True
    assert {"find_customer", "ScriptedChatModel"} <= set(got["exported"])
