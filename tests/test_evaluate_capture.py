"""``evaluate(..., capture=...)``: the tool-call capture of a callable or ``"module:function"``
agent, as ``PythonAgent(fn, capture=...)`` (before, evaluate() had no such keyword)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agenteval import evaluate
from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.evaluation import aevaluate

CASES = [{"id": "a", "input": "Ada"}, {"id": "b", "input": "Bo"}]


def answer_with_a_tool_span(case: Case) -> str:
    """Calls a 'lookup' tool, seen only as an OpenTelemetry span (nothing returned)."""
    from opentelemetry import trace

    tracer = trace.get_tracer("test-agent")
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.arguments": f'{{"name": "{case.input}"}}',
        "gen_ai.tool.call.result": "found",
    }
    with tracer.start_as_current_span("execute_tool lookup", attributes=attrs):
        pass
    return f"hello {case.input}"


@pytest.mark.parametrize(
    ("mode", "calls"), [("auto", ["lookup"]), ("otel", ["lookup"]), ("off", [])]
)
def test_capture_mode_decides_whether_spans_become_tool_calls(
    tmp_path: Path, mode: str, calls: list[str]
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    run = evaluate(CASES, answer_with_a_tool_span, out=tmp_path / mode, capture=mode)
    trials = list(run.trials())
    assert sorted(t.output for t in trials) == ["hello Ada", "hello Bo"]
    assert all([c.name for c in t.tool_calls] == calls for t in trials)
    if calls:
        assert sorted(t.tool_calls[0].arguments["name"] for t in trials) == ["Ada", "Bo"]


def test_aevaluate_takes_capture_and_a_module_function_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    (tmp_path / "span_agent.py").write_text(
        "from tests_span_helper import answer\n", encoding="utf-8"
    )
    (tmp_path / "tests_span_helper.py").write_text(
        "from opentelemetry import trace\n\n\n"
        "def answer(case):\n"
        "    with trace.get_tracer('t').start_as_current_span('execute_tool lookup',"
        " attributes={'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup'}):\n"
        "        pass\n"
        "    return 'ok'\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    for mode, calls in (("off", []), ("auto", ["lookup"])):
        run = asyncio.run(aevaluate(CASES, "span_agent:answer", out=f"r-{mode}", capture=mode))
        assert all([c.name for c in t.tool_calls] == calls for t in run.trials())


def test_a_bad_mode_or_capture_with_an_adapter_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"capture must be .*everything"):
        evaluate(CASES, answer_with_a_tool_span, out=tmp_path / "x", capture="everything")
    adapter = PythonAgent(answer_with_a_tool_span, capture="off")
    with pytest.raises(InputError, match="capture applies to a callable"):
        evaluate(CASES, adapter, out=tmp_path / "y", capture="off")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_otel_without_the_sdk_is_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if not installed
    with pytest.raises(InputError, match="needs opentelemetry-sdk"):
        evaluate(CASES, answer_with_a_tool_span, out=tmp_path / "z", capture="otel")
    run = evaluate(CASES, lambda case: "hi", out=tmp_path / "auto", capture="auto")
    assert [t.tool_calls for t in run.trials()] == [[], []]
