"""One tool-error policy for every path: spans, transcripts and the recording proxy."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from agenteval.agents.base import AgentOutput, Recorder
from agenteval.traces.mapping import SpanEvent, SpanRecord, trajectory_from_spans
from agenteval.traces.merge import Seen, merge
from agenteval.traces.proxy_records import (
    ModelCall,
    RequestedCall,
    ToolOutput,
    trajectory_from_calls,
)
from agenteval.trials.tool_errors import TOOL_ERRORS, error_text_prefix, tool_error_list
from agenteval.trials.transcripts import calls_from_messages

FAILED = "Error: RuntimeError: order beta has already shipped"


def test_error_shaped_text_is_recognised() -> None:
    assert error_text_prefix(FAILED) == "Error:"
    assert error_text_prefix("  error: lower case too") == "Error:"
    assert error_text_prefix("Exception: boom") == "Exception:"
    assert error_text_prefix("RuntimeError: order beta has already shipped") == "RuntimeError: "
    assert error_text_prefix("requests.exceptions.ConnectionError: refused") == (
        "ConnectionError: "
    )
    assert error_text_prefix("Traceback (most recent call last):\n  File") == (
        "Traceback (most recent call last)"
    )
    assert error_text_prefix("Error executing tool lookup: 404") == "Error executing tool"
    assert error_text_prefix("An error occurred while running the tool. Please try again.")


def test_results_mentioning_errors_are_results() -> None:
    for text in (
        "No errors found",
        "Errors: 0",
        "error rate: 2%",
        "The error was fixed in 1.2",
        "ErrorCode: 7",
        "order alpha: shipped. Error: none",
        "Terror: a film",
        "",
    ):
        assert error_text_prefix(text) is None, text
    assert error_text_prefix({"error": "not text"}) is None
    assert error_text_prefix(["Error: in a list"]) is None


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=30)


@given(_WORD, _WORD)
def test_error_word_after_the_start_never_fires(head: str, tail: str) -> None:
    """The word anywhere but the start (a lowercase sentence) is never an error."""
    text = f"{head.strip() or 'ok'} error: {tail}"
    assert error_text_prefix(text) is None


def _openai_transcript(tool_text: str) -> list[dict[str, object]]:
    call = {"id": "c1", "type": "function", "function": {"name": "ship", "arguments": "{}"}}
    return [
        {"role": "user", "content": "ship beta"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": tool_text},
        {"role": "assistant", "content": "It had shipped already."},
    ]


def _spans_with_message_parts(tool_text: str) -> list[SpanRecord]:
    out = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "ship"}]}]
    resp = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1"}]}]
    resp[0]["parts"][0]["response"] = tool_text  # type: ignore[index]
    return [
        SpanRecord(
            "chat m",
            "01",
            start_ns=1,
            end_ns=2,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(out)},
        ),
        SpanRecord(
            "chat m",
            "02",
            start_ns=3,
            end_ns=4,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(resp)},
        ),
    ]


def _tool_span(**kw: object) -> SpanRecord:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ship"}
    attrs.update({"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": "{}"})
    attrs.update(kw.pop("attributes", {}))  # type: ignore[arg-type]
    return SpanRecord("execute_tool ship", "03", start_ns=1, end_ns=2, attributes=attrs, **kw)  # type: ignore[arg-type]


def _proxy(tool_text: str) -> list[ModelCall]:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    first = ModelCall("chat", "/v1/chat/completions", t0, status=200, latency_s=0.1)
    first.requested = [RequestedCall("c1", "ship", "{}")]
    second = ModelCall("chat", "/v1/chat/completions", t0 + timedelta(seconds=1), latency_s=0.1)
    second.outputs = [ToolOutput("c1", tool_text)]
    return [first, second]


def _rules(calls: list) -> list[dict[str, object]]:  # type: ignore[type-arg]
    return tool_error_list(calls)


def test_every_path_gives_the_same_verdict_and_rule() -> None:
    paths = {
        "transcript": calls_from_messages(_openai_transcript(FAILED)),
        "span messages": trajectory_from_spans(_spans_with_message_parts(FAILED)).tool_calls,
        "tool span result": trajectory_from_spans(
            [_tool_span(attributes={"gen_ai.tool.call.result": FAILED})]
        ).tool_calls,
        "proxy": trajectory_from_calls(_proxy(FAILED)).tool_calls,
    }
    for name, calls in paths.items():
        assert [(c.name, c.error, c.result) for c in calls] == [("ship", FAILED, None)], name
        assert _rules(calls) == [{"call": 0, "rule": "text", "prefix": "Error:"}], name


def test_a_result_mentioning_an_error_is_a_result_in_every_path() -> None:
    ok = "No errors: order beta is on its way"
    for calls in (
        calls_from_messages(_openai_transcript(ok)),
        trajectory_from_spans(_spans_with_message_parts(ok)).tool_calls,
        trajectory_from_spans([_tool_span(attributes={"gen_ai.tool.call.result": ok})]).tool_calls,
        trajectory_from_calls(_proxy(ok)).tool_calls,
    ):
        assert [(c.result, c.error) for c in calls] == [(ok, None)]
        assert _rules(calls) == []


def test_explicit_errors_name_their_rule() -> None:
    exc = SpanEvent("exception", {"exception.type": "RuntimeError", "exception.message": "x"})
    by_event = trajectory_from_spans([_tool_span(events=(exc,))]).tool_calls
    assert by_event[0].error == "RuntimeError: x"
    assert _rules(by_event) == [{"call": 0, "rule": "exception"}]
    by_status = trajectory_from_spans([_tool_span(status="error", status_message="bad")]).tool_calls
    assert by_status[0].error == "bad" and _rules(by_status) == [{"call": 0, "rule": "status"}]
    msgs = _openai_transcript("it failed")
    msgs[2] = {"type": "tool", "tool_call_id": "c1", "content": "it failed", "status": "error"}
    flagged = calls_from_messages(msgs)
    assert flagged[0].error == "it failed" and _rules(flagged) == [{"call": 0, "rule": "flag"}]


def test_the_trial_records_which_rule_fired_and_keeps_calls_plain() -> None:
    rec = Recorder()
    out = merge(AgentOutput(output="done", messages=_openai_transcript(FAILED)), None, rec)
    assert out.metadata[TOOL_ERRORS] == [{"call": 0, "rule": "text", "prefix": "Error:"}]
    assert out.metadata["trajectory_source"] == "transcript"
    assert out.tool_calls is not None
    # the note is gone from the calls: they equal the same calls read back from disk
    again = type(out.tool_calls[0]).model_validate(out.tool_calls[0].model_dump())
    assert out.tool_calls[0] == again
    traj = trajectory_from_spans([_tool_span(attributes={"gen_ai.tool.call.result": FAILED})])
    out = merge(AgentOutput(output="done"), Seen("otel", traj), Recorder())
    assert out.metadata[TOOL_ERRORS] == [{"call": 0, "rule": "text", "prefix": "Error:"}]


def test_calls_the_agent_returned_are_taken_as_given() -> None:
    from agenteval.trials.trial import ToolCall

    given_calls = [ToolCall(name="ship", result=FAILED)]
    out = merge(AgentOutput(output="x", tool_calls=given_calls), None, Recorder())
    assert out.tool_calls is not None and out.tool_calls[0].result == FAILED
    assert TOOL_ERRORS not in out.metadata
