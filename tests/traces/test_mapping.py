"""Span → trajectory mapping, on spans made with the real OpenTelemetry SDK.

The OpenInference and LangSmith spans here are built by hand with a tracer (their
instrumentors are not installed), with the attribute names those libraries emit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

from agenteval.cases.case import Case
from agenteval.scorers import builtin_scorers
from agenteval.traces.capture import span_record
from agenteval.traces.mapping import (
    UNFINISHED,
    SpanRecord,
    Trajectory,
    trajectory_from_spans,
)
from agenteval.trials.trial import Trial

Build = Callable[[Tracer], None]


@pytest.fixture
def spans() -> Iterator[Callable[[Build], Trajectory]]:
    """Run ``build(tracer)`` on a private SDK provider and map the finished spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def go(build: Build) -> Trajectory:
        build(provider.get_tracer("test"))
        return trajectory_from_spans(span_record(s) for s in exporter.get_finished_spans())

    yield go
    provider.shutdown()


def _oi_llm(tracer: Tracer, i: int, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    attrs: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.token_count.prompt": 100 + i,
        "llm.token_count.completion": 10,
        "llm.token_count.total": 110 + i,
        "llm.token_count.prompt_details.cache_read": 64,
        "llm.token_count.completion_details.reasoning": 5,
        "llm.tools.0.tool.json_schema": json.dumps(
            {
                "type": "function",
                "function": {
                    "name": "find_customer",
                    "parameters": {
                        "type": "object",
                        "properties": {"email": {"type": "string"}},
                        "required": ["email"],
                    },
                },
            }
        ),
        "llm.output_messages.0.message.role": "assistant",
    }
    for m, (cid, name, args) in enumerate(calls):
        p = f"llm.output_messages.0.message.tool_calls.{m}.tool_call."
        attrs[p + "id"] = cid
        attrs[p + "function.name"] = name
        attrs[p + "function.arguments"] = json.dumps(args)
    with tracer.start_as_current_span("ChatOpenAI", attributes=attrs):
        pass


def test_openinference_tool_llm_and_retriever_spans(spans: Any) -> None:
    def build(tracer: Tracer) -> None:
        with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT"}):
            _oi_llm(tracer, 0, [("call_1", "find_customer", {"email": "ada@example.com"})])
            with tracer.start_as_current_span(
                "find_customer",
                attributes={
                    "openinference.span.kind": "TOOL",
                    "tool.name": "find_customer",
                    "tool.parameters": '{"type": "object"}',  # the schema, not the call
                    "input.value": '{"email": "ada@example.com"}',
                    "input.mime_type": "application/json",
                    "output.value": '{"id": 7, "plan": "pro"}',
                },
            ):
                pass
            with tracer.start_as_current_span(
                "kb_search",
                attributes={
                    "openinference.span.kind": "RETRIEVER",
                    "input.value": "refund policy",
                    "retrieval.documents.0.document.id": "kb-17",
                    "retrieval.documents.0.document.content": "Refunds within 14 days.",
                    "retrieval.documents.0.document.score": 0.91,
                    "retrieval.documents.1.document.id": "kb-3",
                    "retrieval.documents.1.document.content": "Shipping is free.",
                },
            ):
                pass
            _oi_llm(tracer, 1, [])

    t = spans(build)
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("find_customer", {"email": "ada@example.com"}),
        ("kb_search", {"query": "refund policy"}),
    ]
    assert t.tool_calls[0].result == {"id": 7, "plan": "pro"}
    assert t.tool_calls[1].result == [
        {"id": "kb-17", "content": "Refunds within 14 days.", "score": 0.91},
        {"id": "kb-3", "content": "Shipping is free."},
    ]
    assert [(u.model, u.input_tokens, u.output_tokens) for u in t.usage] == [
        ("gpt-4o-mini", 201, 20)
    ]
    assert t.token_details == {
        "gpt-4o-mini": {"prompt_details.cache_read": 128, "completion_details.reasoning": 10}
    }
    assert t.tools is not None and [d["name"] for d in t.tools] == ["find_customer"]
    assert t.active_s is not None and t.active_s > 0

    # The scorers see the retrieved ids and the schema-valid call.
    case = Case(
        id="k",
        input="Refund policy for ada@example.com?",
        relevant_docs=["kb-17", "kb-99"],
        expected_tools=["find_customer"],
    )
    trial = Trial(case_id="k", output="14 days", tool_calls=t.tool_calls, tools=t.tools)
    scores = {fn.__name__: fn(case, trial) for fn in builtin_scorers()}
    assert scores["retrieval_recall"].value == 0.5
    assert scores["tool_arguments_valid"].value == 0.0  # kb_search is not a defined tool
    assert scores["tool_selection"].value == 1.0


def test_openinference_llm_only_spans_give_the_calls_from_the_messages(spans: Any) -> None:
    """No tool span instrumented: the model's requested calls are the trajectory."""

    def build(tracer: Tracer) -> None:
        _oi_llm(tracer, 0, [("c1", "find_customer", {"email": "a@b.c"}), ("c2", "refund", {})])
        attrs = {
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "tool",
            "llm.input_messages.0.message.tool_call_id": "c2",
            "llm.input_messages.0.message.content": "refunded",
        }
        with tracer.start_as_current_span("ChatOpenAI", attributes=attrs):
            pass

    t = spans(build)
    assert [(c.id, c.name, c.arguments, c.result) for c in t.tool_calls] == [
        ("c1", "find_customer", {"email": "a@b.c"}, None),
        ("c2", "refund", {}, "refunded"),
    ]


def test_error_status_and_exception_events_are_errors_not_results(spans: Any) -> None:
    def build(tracer: Tracer) -> None:
        with tracer.start_as_current_span(
            "lookup",
            attributes={"openinference.span.kind": "TOOL", "output.value": "partial"},
        ) as s:
            s.set_status(Status(StatusCode.ERROR, "upstream 503"))
        try:
            with tracer.start_as_current_span(
                "execute_tool charge",
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "charge"},
            ):
                raise KeyError("card")
        except KeyError:
            pass
        with tracer.start_as_current_span(
            "execute_tool log", attributes={"gen_ai.operation.name": "execute_tool"}
        ) as s:
            s.add_event("exception", {"exception.type": "a.b.Boom", "exception.message": "x"})

    t = spans(build)
    assert [(c.name, c.result, c.error) for c in t.tool_calls] == [
        ("lookup", None, "upstream 503"),
        ("charge", None, "KeyError: 'card'"),
        ("log", None, "Boom: x"),
    ]


def test_genai_semconv_opt_in_content_falls_back_to_events_and_messages(spans: Any) -> None:
    """Arguments/results are opt-in on execute_tool spans: read events, then model messages."""

    def build(tracer: Tracer) -> None:
        out = [{"role": "assistant", "parts": [
            {"type": "tool_call", "id": "t1", "name": "weather", "arguments": {"city": "Oslo"}},
            {"type": "tool_call", "id": "t2", "name": "clock", "arguments": {"tz": "CET"}},
        ]}]  # fmt: skip
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": 50,
                "gen_ai.usage.output_tokens": 7,
                "gen_ai.usage.cache_read.input_tokens": 32,
                "gen_ai.output.messages": json.dumps(out),
            },
        ):
            pass
        for cid, name in (("t1", "weather"), ("t2", "clock")):
            with tracer.start_as_current_span(
                f"execute_tool {name}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": cid,
                },
            ) as s:
                if name == "clock":
                    s.add_event("gen_ai.tool.result", {"gen_ai.tool.call.result": "12:00"})
        back = [{"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "t1", "result": "4 °C"},
        ]}]  # fmt: skip
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.prompt_tokens": 60,  # the older names
                "gen_ai.usage.completion_tokens": 9,
                "gen_ai.input.messages": json.dumps(back),
            },
        ):
            pass

    t = spans(build)
    assert [(c.id, c.name, c.arguments, c.result) for c in t.tool_calls] == [
        ("t1", "weather", {"city": "Oslo"}, "4 °C"),
        ("t2", "clock", {"tz": "CET"}, "12:00"),
    ]
    assert sorted((u.model, u.input_tokens, u.output_tokens) for u in t.usage) == [
        ("gpt-4o", 60, 9),
        ("gpt-4o-2024-08-06", 50, 7),
    ]
    assert t.token_details == {"gpt-4o-2024-08-06": {"cache_read.input_tokens": 32}}


def test_langsmith_and_pydantic_ai_v2_attribute_names(spans: Any) -> None:
    def build(tracer: Tracer) -> None:
        with tracer.start_as_current_span(
            "search_docs",
            attributes={
                "langsmith.span.kind": "tool",
                "gen_ai.operation.name": "execute_tool",
                "langsmith.trace.name": "search_docs",
                "gen_ai.prompt": '{"query": "refunds"}',
                "gen_ai.completion": '{"output": "14 days"}',
            },
        ):
            pass
        with tracer.start_as_current_span(
            "running tool",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "calc",
                "tool_arguments": '{"expr": "2+2"}',
                "tool_response": "4",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "ChatAnthropic",
            attributes={
                "langsmith.span.kind": "llm",
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "claude-x",
                "gen_ai.usage.input_tokens": 5,
                "gen_ai.usage.output_tokens": 6,
            },
        ):
            pass

    t = spans(build)
    assert [(c.name, c.arguments, c.result) for c in t.tool_calls] == [
        ("search_docs", {"query": "refunds"}, {"output": "14 days"}),
        ("calc", {"expr": "2+2"}, 4),
    ]
    assert [(u.model, u.input_tokens, u.output_tokens) for u in t.usage] == [("claude-x", 5, 6)]


def test_plain_records_unfinished_spans_and_active_time_union() -> None:
    s = 1_000_000_000
    recs = [
        SpanRecord("chat a", "1", start_ns=0, end_ns=2 * s,
                   attributes={"gen_ai.operation.name": "chat"}),
        SpanRecord("chat b", "2", start_ns=1 * s, end_ns=3 * s,
                   attributes={"gen_ai.operation.name": "chat"}),
        SpanRecord("execute_tool slow", "3", start_ns=4 * s, end_ns=None,
                   attributes={"gen_ai.operation.name": "execute_tool",
                               "gen_ai.tool.call.arguments": '{"n": 1}'}),
        SpanRecord("http GET", "4", start_ns=0, end_ns=9 * s),
        SpanRecord("retrieve", "5", parent_id="3", start_ns=5 * s, end_ns=6 * s,
                   attributes={"openinference.span.kind": "RETRIEVER"}),
    ]  # fmt: skip
    t = trajectory_from_spans(recs)
    assert t.active_s == 3.0  # [0, 3] s: overlapping model calls count once
    (call,) = t.tool_calls  # the retriever inside the tool span is that tool's work
    assert (call.name, call.arguments, call.error, call.duration_s) == (
        "slow",
        {"n": 1},
        UNFINISHED,
        None,
    )
    assert t.usage == []  # model spans without token counts add no usage
    assert trajectory_from_spans([]).empty


def test_openinference_langchain_tool_spans_pair_with_the_models_calls() -> None:
    """As OpenInference's LangChain instrumentation records them: a bare string input (a
    tool's only argument), a serialised ToolMessage output (its tool_call_id, its status);
    a span with no output and no id pairs with the earliest unpaired call of its name."""

    def tool(span_id: str, start: int, name: str, inp: str, out: Any = None) -> SpanRecord:
        attrs: dict[str, Any] = {
            "openinference.span.kind": "TOOL",
            "tool.name": name,
            "input.value": inp,
        }
        if out is not None:
            attrs["output.value"] = json.dumps(out)
        return SpanRecord(name, span_id, start_ns=start, end_ns=start + 1, attributes=attrs)

    def message(call_id: str, content: str, status: str = "success") -> dict[str, Any]:
        data = {"content": content, "tool_call_id": call_id, "status": status, "type": "tool"}
        return {"type": "tool", "data": data}

    llm_attrs: dict[str, Any] = {"openinference.span.kind": "LLM"}
    for i, (cid, name, args) in enumerate(
        [("c1", "find", {"name": "Ada"}), ("c2", "find", {"name": "Bo"}), ("c3", "find", {})]
    ):
        pre = f"llm.output_messages.{i}.message.tool_calls.0.tool_call."
        llm_attrs[pre + "id"] = cid
        llm_attrs[pre + "function.name"] = name
        llm_attrs[pre + "function.arguments"] = json.dumps(args)
    llm = SpanRecord("llm", "m", start_ns=0, end_ns=1, attributes=llm_attrs)
    spans = [
        llm,
        tool("a", 10, "find", "Bo", message("c2", '{"id": 2}')),
        tool("b", 20, "find", "Ada"),  # no output, no id: the first unpaired "find", c1
        tool("c", 30, "find", "{}", {"lc": 1, "kwargs": message("c3", "gone", "error")["data"]}),
    ]
    calls = trajectory_from_spans(spans).tool_calls
    assert [(c.id, c.arguments, c.result, c.error) for c in calls] == [
        ("c2", {"name": "Bo"}, {"id": 2}, None),
        ("c1", {"name": "Ada"}, None, None),
        ("c3", {}, None, "gone"),
    ]
