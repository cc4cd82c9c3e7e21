"""Property: one agent, seen through any path or convention, gives the same calls and the
same scores (results are kept as the text the tool returned; errors by the shared rule)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.scorers.config import ScorerConfig, build_scorers
from agenteval.traces.logs import LogRecord, attach
from agenteval.traces.mapping import SpanRecord, trajectory_from_spans
from agenteval.traces.proxy_records import (
    ModelCall,
    RequestedCall,
    ToolOutput,
    trajectory_from_calls,
)
from agenteval.trials.tool_errors import tool_error_list
from agenteval.trials.transcripts import calls_from_messages
from agenteval.trials.trial import ToolCall, Trial

TRACE = "ab" * 16
# a result that is a bare JSON literal ("false", "null", "42") is read differently by the
# two kinds of path, by design: a span attribute is the tool's value serialised (parsed),
# a message is the text the model was sent (kept); test_a_bare_json_literal_result... below
_LITERALS = ("true", "false", "null")
_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyz :.,", min_size=0, max_size=20).filter(
    lambda t: t.strip() not in _LITERALS
)
_output = st.one_of(
    _text,
    st.builds(lambda m: f"Error: RuntimeError: {m}", _text),
    st.builds(lambda m: f"ValueError: {m}", _text),
    st.builds(lambda m: f"no error: {m}", _text),
)
_call = st.tuples(
    st.sampled_from(["find", "ship", "list"]),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 9), max_size=2),
    _output,
)
AGENTS = st.lists(_call, min_size=1, max_size=4)


def _oa_call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def transcript(agent: list[Any]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i, (name, args, out) in enumerate(agent):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [_oa_call(i, name, args)]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": out})
    return msgs


def _model_span(k: int, attrs: dict[str, Any], events: tuple[Any, ...] = ()) -> SpanRecord:
    return SpanRecord(f"chat {k}", f"{k + 1:016x}", TRACE, None, 10 * k, 10 * k + 5, attrs, events)


def genai_spans(agent: list[Any]) -> list[SpanRecord]:
    """Model spans only, current convention: parts in gen_ai.*.messages."""
    spans, history = [], [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    for i, (name, args, out) in enumerate(agent):
        call = {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": f"c{i}", "name": name, "arguments": args}],
        }
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([call]),
        }
        spans.append(_model_span(i, attrs))
        history = [
            *history,
            call,
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": f"c{i}", "response": out}],
            },
        ]
    spans.append(
        _model_span(
            len(agent),
            {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(history)},
        )
    )
    return spans


def tool_spans(agent: list[Any]) -> list[SpanRecord]:
    """execute_tool spans with the call's own attributes."""
    return [
        SpanRecord(
            f"execute_tool {name}",
            f"{i + 1:016x}",
            TRACE,
            None,
            10 * i,
            10 * i + 5,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"c{i}",
                "gen_ai.tool.call.arguments": json.dumps(args),
                "gen_ai.tool.call.result": out,
            },
        )
        for i, (name, args, out) in enumerate(agent)
    ]


def flattened(agent: list[Any], style: str) -> list[SpanRecord]:
    """OpenLLMetry ``gen_ai.prompt.N.*`` or OpenInference ``llm.*_messages.N.message.*``."""
    msgs = transcript(agent)
    spans = []
    for k in range(len(agent) + 1):
        upto = msgs[: 1 + 2 * k]
        out = msgs[1 + 2 * k] if k < len(agent) else None
        a: dict[str, Any] = {}
        if style == "openllmetry":
            a["llm.request.type"] = "chat"
            for n, m in enumerate(upto):
                a[f"gen_ai.prompt.{n}.role"] = m["role"]
                if m.get("content") is not None:
                    a[f"gen_ai.prompt.{n}.content"] = m["content"]
                if "tool_call_id" in m:
                    a[f"gen_ai.prompt.{n}.tool_call_id"] = m["tool_call_id"]
                for j, tc in enumerate(m.get("tool_calls") or []):
                    a[f"gen_ai.prompt.{n}.tool_calls.{j}.id"] = tc["id"]
                    a[f"gen_ai.prompt.{n}.tool_calls.{j}.name"] = tc["function"]["name"]
                    a[f"gen_ai.prompt.{n}.tool_calls.{j}.arguments"] = tc["function"]["arguments"]
            if out is not None:
                tc = out["tool_calls"][0]
                a["gen_ai.completion.0.role"] = "assistant"
                a["gen_ai.completion.0.tool_calls.0.id"] = tc["id"]
                a["gen_ai.completion.0.tool_calls.0.name"] = tc["function"]["name"]
                a["gen_ai.completion.0.tool_calls.0.arguments"] = tc["function"]["arguments"]
        else:
            a["openinference.span.kind"] = "LLM"
            for side, ms in (("input", upto), ("output", [out] if out else [])):
                for n, m in enumerate(ms):
                    p = f"llm.{side}_messages.{n}.message"
                    a[f"{p}.role"] = m["role"]
                    if m.get("content") is not None:
                        a[f"{p}.content"] = m["content"]
                    if "tool_call_id" in m:
                        a[f"{p}.tool_call_id"] = m["tool_call_id"]
                    for j, tc in enumerate(m.get("tool_calls") or []):
                        q = f"{p}.tool_calls.{j}.tool_call"
                        a[f"{q}.id"] = tc["id"]
                        a[f"{q}.function.name"] = tc["function"]["name"]
                        a[f"{q}.function.arguments"] = tc["function"]["arguments"]
        spans.append(_model_span(k, a))
    return spans


def event_logs(agent: list[Any]) -> list[SpanRecord]:
    """Content-less model spans, content in event-era log records joined by span id."""
    msgs = transcript(agent)
    spans, logs = [], []
    for k in range(len(agent) + 1):
        span = _model_span(k, {"gen_ai.operation.name": "chat"})
        spans.append(span)
        for m in msgs[: 1 + 2 * k]:
            body = {"content": m["content"]} if m.get("content") is not None else {}
            if m.get("tool_calls"):
                body["tool_calls"] = m["tool_calls"]
            if m["role"] == "tool":
                body["id"] = m["tool_call_id"]
            logs.append(LogRecord(f"gen_ai.{m['role']}.message", TRACE, span.span_id, body=body))
        if k < len(agent):
            choice = {"message": {"role": "assistant", "tool_calls": msgs[1 + 2 * k]["tool_calls"]}}
            logs.append(LogRecord("gen_ai.choice", TRACE, span.span_id, body=choice))
    return attach(spans, logs)


def proxy(agent: list[Any]) -> list[ModelCall]:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    calls = []
    for k in range(len(agent) + 1):
        mc = ModelCall("chat", "/v1/chat/completions", t0 + timedelta(seconds=k), latency_s=0.1)
        if k < len(agent):
            name, args, _ = agent[k]
            mc.requested = [RequestedCall(f"c{k}", name, json.dumps(args))]
        if k > 0:
            mc.outputs = [ToolOutput(f"c{k - 1}", agent[k - 1][2])]
        calls.append(mc)
    return calls


def _seen(calls: list[ToolCall]) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    return [(c.name, c.arguments, c.result, c.error) for c in calls], tool_error_list(calls)


CASE = Case.model_validate({"id": "c", "input": "go", "expected_tools": {"find": 1}})
SCORERS = build_scorers(ScorerConfig())


def _scores(calls: list[ToolCall]) -> dict[str, Any]:
    t = Trial(case_id="c", output="done", tool_calls=calls)
    return {k: (s.status, s.value) for k, s in SCORERS.apply(CASE, t).items()}


def _paths(agent: list[Any]) -> dict[str, list[ToolCall]]:
    return {
        "transcript": calls_from_messages(transcript(agent)),
        "genai spans": trajectory_from_spans(genai_spans(agent)).tool_calls,
        "tool spans": trajectory_from_spans(tool_spans(agent)).tool_calls,
        "openllmetry": trajectory_from_spans(flattened(agent, "openllmetry")).tool_calls,
        "openinference": trajectory_from_spans(flattened(agent, "openinference")).tool_calls,
        "event logs": trajectory_from_spans(event_logs(agent)).tool_calls,
        "proxy": trajectory_from_calls(proxy(agent)).tool_calls,
    }


_SPAN_PATHS = ("tool spans",)  # the result is a span attribute: the value, serialised


@pytest.mark.parametrize(
    ("text", "value"), [("false", False), ("true", True), ("42", 42), ("-1.5", -1.5)]
)
def test_a_bare_json_literal_result_is_the_value_on_span_paths_the_text_on_message_paths(
    text: str, value: Any
) -> None:
    for name, calls in _paths([("find", {"a": 1}, text)]).items():
        want = value if name in _SPAN_PATHS else text
        assert calls[0].result == want and type(calls[0].result) is type(want), name


@settings(max_examples=60, deadline=None)
@given(AGENTS)
def test_every_path_sees_the_same_agent(agent: list[Any]) -> None:
    paths = _paths(agent)
    seen = {k: _seen(v) for k, v in paths.items()}
    first = seen["transcript"]
    assert [c[0] for c in first[0]] == [a[0] for a in agent]
    for name, got in seen.items():
        assert got == first, name
    scores = {k: _scores(v) for k, v in paths.items()}
    assert all(s == scores["transcript"] for s in scores.values())
