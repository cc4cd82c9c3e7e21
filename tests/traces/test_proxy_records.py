"""Reading model traffic: requests, JSON and streamed responses, and the trajectory."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta

from agenteval.traces.proxy_records import (
    ModelCall,
    RequestedCall,
    is_error_text,
    trajectory_from_calls,
)
from agenteval.traces.proxy_wire import ResponseReader, read_request

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def sse(*events: object) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\r\n\r\n".encode() for e in events) + b"data: [DONE]\n\n"


def read(api: str, body: bytes, *, ctype: str = "application/json", enc: str = "") -> ModelCall:
    call = ModelCall(api=api, path="/x", started_at=T0, status=200)
    r = ResponseReader(api, ctype, enc)
    for i in range(0, len(body), 7):  # in small pieces, as a network delivers them
        r.feed(body[i : i + 7])
    r.finish(call)
    return call


def test_error_text_convention() -> None:
    assert is_error_text("Error: ValueError: boom")
    assert is_error_text("  error: nope") and is_error_text("ERROR: no")
    assert is_error_text("An error occurred while running the tool. Please try again. Error: x")
    assert not is_error_text("No errors found")
    assert not is_error_text({"error": "x"})


def test_chat_stream_with_two_parallel_calls_assembled_from_deltas() -> None:
    def tc(i: int, **kw: object) -> dict[str, object]:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, **kw}]}}]}

    body = sse(
        {"model": "m", **tc(0, id="a", function={"name": "find", "arguments": ""})},
        tc(1, id="b", function={"name": "count", "arguments": '{"n"'}),
        tc(0, function={"arguments": '{"q": 1}'}),
        tc(1, function={"arguments": ": 2}"}),
        {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 6,
                                  "completion_tokens_details": {"reasoning_tokens": 3}}},
    )  # fmt: skip
    call = read("chat", body, ctype="text/event-stream; charset=utf-8")
    assert call.unparsed is None
    assert [(c.id, c.name, c.arguments) for c in call.requested] == [
        ("a", "find", '{"q": 1}'),
        ("b", "count", '{"n": 2}'),
    ]
    assert (call.model, call.input_tokens, call.output_tokens) == ("m", 4, 6)
    assert call.details == {"reasoning.output_tokens": 3}


def test_responses_stream_without_a_completed_event_uses_the_finished_items() -> None:
    item = {"type": "function_call", "call_id": "c9", "name": "f", "arguments": "{}"}
    body = sse({"type": "response.output_item.done", "item": item})
    call = read("responses", body, ctype="text/event-stream")
    assert [(c.id, c.name) for c in call.requested] == [("c9", "f")]
    assert call.input_tokens is None


def test_unreadable_bodies_are_recorded_unparsed() -> None:
    assert read("chat", b"data: {broken\n\n", ctype="text/event-stream").unparsed == (
        "stream event is not JSON: {broken"
    )
    assert read("chat", b"xx", enc="br").unparsed == "content-encoding br is not read"
    assert read("chat", b"[1]").unparsed == "response is not a JSON object"
    ok = read("chat", zlib.compress(b'{"model": "z"}'), enc="deflate")
    assert (ok.unparsed, ok.model) == (None, "z")


def test_request_outputs_tools_and_the_trajectory() -> None:
    first = ModelCall(api="responses", path="/responses", started_at=T0, latency_s=1.0)
    read_request(first, json.dumps({"model": "m", "input": "hi", "tools": [
        {"type": "function", "name": "f", "parameters": {"type": "object"}},
        {"type": "web_search"}]}).encode())  # fmt: skip
    first.requested = [
        RequestedCall("c1", "f", '{"a": 1}'),
        RequestedCall("c2", "f", "not json"),
    ]
    first.input_tokens, first.output_tokens = 10, 2
    second = ModelCall(
        api="responses", path="/responses", started_at=T0 + timedelta(seconds=3), latency_s=1.0
    )
    parts = [{"type": "input_text", "text": "Error: bad "}, {"type": "input_text", "text": "args"}]
    outputs = [
        {"type": "function_call_output", "call_id": "c2", "output": parts},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"type": "function_call_output", "call_id": "zz", "output": "stray"},
    ]
    read_request(second, json.dumps({"model": "m", "stream": True, "input": outputs}).encode())
    second.input_tokens, second.output_tokens = 20, 1
    assert second.stream is True
    t = trajectory_from_calls([second, first])
    assert [(c.id, c.arguments, c.result, c.error) for c in t.tool_calls] == [
        ("c1", {"a": 1}, "42", None),
        ("c2", "not json", None, "Error: bad args"),
    ]
    assert t.tool_calls[0].started_at == T0 + timedelta(seconds=1)
    assert t.tool_calls[0].duration_s == 2.0
    assert [(u.model, u.input_tokens, u.output_tokens) for u in t.usage] == [("m", 30, 3)]
    assert t.active_s == 2.0
    assert t.tools == [{"name": "f", "parameters": {"type": "object"}}]
    assert [m["latency_s"] for m in t.metadata["model_calls"]] == [1.0, 1.0]
    # overlapping calls count once in the active time
    second.started_at = T0 + timedelta(seconds=0.5)
    assert trajectory_from_calls([first, second]).active_s == 1.5


def test_a_chat_stream_without_include_usage_has_no_tokens() -> None:
    body = sse({"model": "m", "choices": [{"index": 0, "delta": {"content": "hi"}}]})
    call = read("chat", body, ctype="text/event-stream")
    call.latency_s = 0.1
    assert (call.input_tokens, call.output_tokens, call.unparsed) == (None, None, None)
    t = trajectory_from_calls([call])
    assert t.usage == [] and t.metadata["model_calls"][0]["model"] == "m"


def test_the_agents_sdk_default_error_text_is_an_error() -> None:
    import pytest

    tool = pytest.importorskip("agents.tool")
    assert is_error_text(tool.default_tool_error_function(None, ValueError("x")))  # type: ignore[arg-type]


def test_langgraph_toolnode_error_text_is_an_error() -> None:
    import pytest

    prebuilt = pytest.importorskip("langgraph.prebuilt.tool_node")
    assert is_error_text(prebuilt.TOOL_CALL_ERROR_TEMPLATE.format(error=repr(ValueError("x"))))
