"""Every GenAI convention read the same: a 2-tool + failing-tool agent, as the real
instrumentation libraries recorded it (``fixtures/genai/``, recorded by
``record_genai.py``), scores as the same agent returning explicit ``tool_calls``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.cases.case import Case
from agenteval.scorers.config import ScorerConfig, build_scorers
from agenteval.scoring.unrecorded import SCORER_NEEDS
from agenteval.traces.importer import ImportOptions, import_traces
from agenteval.traces.mapping import SpanEvent, SpanRecord, trajectory_from_spans
from agenteval.trials.trial import ToolCall, Trial

FIXTURES = Path(__file__).parent / "fixtures" / "genai"
SHIPPED = "Error: RuntimeError: order beta has already shipped"
EXPECTED = [
    ("find_customer", {"name": "Ada"}, json.dumps({"id": 7, "name": "Ada"}), None),
    ("list_orders", {"customer": 7}, json.dumps(["alpha", "beta"]), None),
    ("ship", {"order": "beta"}, None, SHIPPED),
]
ON = sorted(
    p.name.removesuffix(".traces.json")
    for p in FIXTURES.glob("*.traces.json")
    if not p.name.endswith("-off.traces.json")
)
OFF = sorted(p.name.removesuffix(".traces.json") for p in FIXTURES.glob("*-off.traces.json"))
CASE = Case.model_validate(
    {
        "id": "ship",
        "input": "Ship Ada's order",
        "expected_tools": {"find_customer": 1, "list_orders": 1, "ship": 1},
        "expected_calls": [
            {"name": "find_customer", "arguments": {"name": "Ada"}},
            {"name": "list_orders"},
            {"name": "ship", "arguments": {"order": "beta"}},
        ],
    }
)


def _files(stem: str) -> list[Path]:
    files = [FIXTURES / f"{stem}.traces.json"]
    logs = FIXTURES / f"{stem}.logs.json"
    return files + ([logs] if logs.exists() else [])


def _imported(stem: str) -> Trial:
    res = import_traces(_files(stem), ImportOptions())
    assert len(res.trials) == 1, stem
    return res.trials[0]


def _explicit(tools: list[dict[str, Any]] | None = None) -> Trial:
    """The same agent returning its calls itself (offering the same tools)."""
    calls = [ToolCall(name=n, arguments=a, result=r, error=e) for n, a, r, e in EXPECTED]
    return Trial(case_id="ship", output="echo: " + SHIPPED, tool_calls=calls, tools=tools)


def _scores(trial: Trial) -> dict[str, Any]:
    scorers = build_scorers(ScorerConfig())
    return {k: (s.status, s.value) for k, s in scorers.apply(CASE, trial).items()}


def test_fixtures_are_there() -> None:
    libs = {s.split("-")[0] for s in ON}
    assert {"openai", "openllmetry", "openinference"} <= libs
    assert any(s.startswith("openllmetry-0.5") for s in ON)  # the flattened attributes


@pytest.mark.parametrize("stem", ON)
def test_content_on_recovers_every_call(stem: str) -> None:
    t = _imported(stem)
    got = [(c.name, c.arguments, c.result, c.error) for c in t.tool_calls]
    assert got == EXPECTED
    assert t.output == "echo: " + SHIPPED
    assert t.usage and t.usage[0].input_tokens > 0 and t.latency.active_s
    assert "not_recorded" not in t.metadata
    assert t.metadata["tool_errors"] == [{"call": 2, "rule": "text", "prefix": "Error:"}]


@pytest.mark.parametrize("stem", ON)
def test_content_on_scores_like_explicit_tool_calls(stem: str) -> None:
    t = _imported(stem)
    assert _scores(t) == _scores(_explicit(t.tools))


@pytest.mark.parametrize("stem", OFF)
def test_content_off_is_not_recorded_never_not_called(stem: str) -> None:
    t = _imported(stem)
    assert {"tool_arguments", "tool_results"} <= set(t.metadata["not_recorded"])
    reason = t.metadata["not_recorded_reason"]
    setting = {
        "openai": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        "openllmetry": "TRACELOOP_TRACE_CONTENT",
        "openinference": "OPENINFERENCE_HIDE_INPUTS",
    }[stem.split("-")[0]]
    assert setting in reason
    scores = build_scorers(ScorerConfig()).apply(CASE, t)
    missing = set(t.metadata["not_recorded"])
    needing = [n for n, needs in SCORER_NEEDS.items() if needs & missing and n in scores]
    assert {"tool_execution", "tool_call_match"} <= set(needing)
    for name in needing:
        assert scores[name].status == "not_applicable", (name, scores[name])
        assert setting in (scores[name].reason or "")
    if "tool_calls" in missing:  # not "never called find_customer"
        assert "tool_selection" in needing
    assert t.usage and t.latency.active_s  # the model calls are still seen


def _span(name: str, sid: str, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(name, sid, "ab" * 16, "00" * 7 + "01", start, start + 1, attrs)


def test_adk_legacy_attributes() -> None:
    """Written from google/adk-python telemetry/tracing.py's attribute names (ADK cannot
    be installed here): execute_tool spans with gcp.vertex.agent.tool_call_args /
    tool_response, call_llm spans with the request and response JSON."""
    req = {
        "contents": [
            {"role": "user", "parts": [{"text": "Ship Ada's order"}]},
            {"role": "model", "parts": [{"function_call": {"id": "a1", "name": "ship"}}]},
        ]
    }
    req["contents"][1]["parts"][0]["function_call"]["args"] = {"order": "beta"}  # type: ignore[index]
    spans = [
        _span(
            "call_llm",
            "00000000000000a1",
            10,
            **{
                "gen_ai.system": "gcp.vertex.agent",
                "gen_ai.request.model": "gemini",
                "gen_ai.usage.input_tokens": 5,
                "gcp.vertex.agent.llm_request": json.dumps(req),
                "gcp.vertex.agent.llm_response": json.dumps(
                    {"content": {"role": "model", "parts": [{"text": "done"}]}}
                ),
            },
        ),
        _span(
            "execute_tool find_customer",
            "00000000000000a2",
            20,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "find_customer",
                "gen_ai.tool.call.id": "a0",
                "gcp.vertex.agent.tool_call_args": json.dumps({"name": "Ada"}),
                "gcp.vertex.agent.tool_response": json.dumps({"result": "Ada is 7"}),
            },
        ),
    ]
    t = trajectory_from_spans(spans)
    assert [(c.name, c.arguments, c.result) for c in t.tool_calls] == [
        ("find_customer", {"name": "Ada"}, "Ada is 7")
    ]
    assert t.usage[0].model == "gemini" and t.usage[0].input_tokens == 5
    assert t.active_s is not None


def test_openinference_wrapped_python_call() -> None:
    """smolagents / LlamaIndex TOOL spans: input.value is the Python call (written from
    their documented shape, neither library installed here)."""
    llm = _span(
        "llm",
        "00000000000000b1",
        10,
        **{
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c9",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "ship",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
                '{"order": "beta"}'
            ),
        },
    )
    kw = {"args": [], "kwargs": {"name": "Ada"}, "sanitize_inputs_outputs": True}
    tool_kw = _span(
        "find_customer",
        "00000000000000b2",
        20,
        **{
            "openinference.span.kind": "TOOL",
            "tool.name": "find_customer",
            "input.value": json.dumps(kw),
            "output.value": "7",
        },
    )
    tool_pos = _span(
        "ship",
        "00000000000000b3",
        30,
        **{
            "openinference.span.kind": "TOOL",
            "tool.name": "ship",
            "input.value": json.dumps({"args": ["beta"], "kwargs": {}}),
            "output.value": SHIPPED,
        },
    )
    t = trajectory_from_spans([llm, tool_kw, tool_pos])
    got = [(c.name, c.arguments, c.error) for c in t.tool_calls]
    assert got == [
        ("find_customer", {"name": "Ada"}, None),
        ("ship", {"order": "beta"}, SHIPPED),  # from the paired LLM span's call
    ]


def test_openinference_message_contents_form() -> None:
    root = _span(
        "llm",
        "00000000000000c1",
        10,
        **{
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.contents.0.message_content.type": "text",
            "llm.output_messages.0.message.contents.0.message_content.text": "All done",
        },
    )
    res = import_traces_from([root])
    assert res.output == "All done"


def test_event_era_span_events_on_tool_and_chat_spans() -> None:
    """GenAI semconv <= 1.36 style: the content as span events, not attributes."""
    chat = SpanRecord(
        "chat m",
        "00000000000000d1",
        "cd" * 16,
        None,
        10,
        11,
        {"gen_ai.operation.name": "chat"},
        (
            SpanEvent("gen_ai.user.message", {"content": "Ship Ada's order"}),
            SpanEvent(
                "gen_ai.choice",
                {"message": json.dumps({"role": "assistant", "content": "Shipped."})},
            ),
        ),
    )
    tool = SpanRecord(
        "execute_tool ship",
        "00000000000000d2",
        "cd" * 16,
        "00000000000000d1",
        12,
        13,
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ship"},
        (
            SpanEvent(
                "gen_ai.assistant.message",
                {
                    "tool_calls": json.dumps(
                        [{"id": "x", "function": {"name": "ship", "arguments": '{"order": "b"}'}}]
                    )
                },
            ),
            SpanEvent("gen_ai.tool.message", {"id": "x", "content": SHIPPED}),
        ),
    )
    t = trajectory_from_spans([chat, tool])
    assert [(c.name, c.arguments, c.error) for c in t.tool_calls] == [
        ("ship", {"order": "b"}, SHIPPED)
    ]
    assert import_traces_from([chat, tool]).output == "Shipped."


def import_traces_from(spans: list[SpanRecord]) -> Trial:
    """One unit's trial from in-memory spans, as import-traces makes it."""
    from agenteval.traces.importer import unit_trial
    from agenteval.traces.units import group_units

    units = group_units(spans).units
    assert len(units) == 1
    return unit_trial(units[0])[1]
