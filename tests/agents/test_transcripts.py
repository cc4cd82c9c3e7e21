"""Tool calls read from a returned ``messages`` transcript (OpenAI, LangChain, Anthropic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval import evaluate
from agenteval.trials.transcripts import calls_from_messages


def summary(messages: list[Any]) -> list[tuple[Any, ...]]:
    return [(c.id, c.name, c.arguments, c.result, c.error) for c in calls_from_messages(messages)]


OPENAI = [
    {"role": "system", "content": "Be helpful."},
    {"role": "user", "content": "Which plan is ada@example.com on?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "find_customer", "arguments": '{"email": "ada@example.com"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_plan", "arguments": '{"customer_id": 7'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"id": 7}'},
    {"role": "assistant", "content": "Pro."},
]


def test_openai_tool_calls_are_paired_with_tool_messages_by_id() -> None:
    assert summary(OPENAI) == [
        ("call_1", "find_customer", {"email": "ada@example.com"}, '{"id": 7}', None),
        ("call_2", "get_plan", '{"customer_id": 7', "bad arguments", None),  # raw: not JSON
    ]


def test_langchain_message_dicts_with_error_status_and_serialised_forms() -> None:
    messages = [
        {"type": "human", "content": "refund order 12"},
        {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "lookup", "args": {"order": 12}, "id": "lc_1"}],
            "invalid_tool_calls": [
                {"name": "refund", "args": "{order: 12", "id": "lc_2", "error": "bad JSON"}
            ],
        },
        {"type": "tool", "tool_call_id": "lc_1", "content": "order 12: $30", "status": "success"},
        # messages_to_dict form
        {
            "type": "ai",
            "data": {
                "content": "",
                "tool_calls": [{"name": "refund", "args": {"order": 12}, "id": "lc_3"}],
            },
        },
        {
            "type": "tool",
            "data": {"tool_call_id": "lc_3", "content": "card expired", "status": "error"},
        },
        # dumpd / serialised form
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "AIMessage"],
            "kwargs": {"content": "", "tool_calls": [{"name": "notify", "args": {}, "id": "lc_4"}]},
        },
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {"tool_call_id": "lc_4", "content": "sent"},
        },
    ]
    assert summary(messages) == [
        ("lc_1", "lookup", {"order": 12}, "order 12: $30", None),
        ("lc_2", "refund", "{order: 12", None, None),
        ("lc_3", "refund", {"order": 12}, None, "card expired"),
        ("lc_4", "notify", {}, "sent", None),
    ]


def test_anthropic_tool_use_and_tool_result_blocks_with_is_error() -> None:
    messages = [
        {"role": "user", "content": "Weather in Oslo and Lima?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Lima"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                 "content": [{"type": "text", "text": "timeout"}]},
                {"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": [{"type": "text", "text": "4 °C"}, {"type": "text", "text": "dry"}]},
            ],
        },
    ]  # fmt: skip
    assert summary(messages) == [
        ("toolu_1", "weather", {"city": "Oslo"}, "4 °C\ndry", None),
        ("toolu_2", "weather", {"city": "Lima"}, None, "timeout"),
    ]


F_CALL = {"type": "tool_call", "id": "a", "name": "f", "arguments": {"x": 1}}


def test_genai_parts_duplicates_results_without_id_and_junk() -> None:
    messages: list[Any] = [
        "not a message",
        {"role": "assistant", "parts": [F_CALL]},
        {"role": "assistant", "parts": [F_CALL]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "a", "result": {"y": 2}}]},
        {"role": "assistant", "tool_calls": [{"function": {"name": "g", "arguments": "{}"}}]},
        {"role": "assistant", "tool_calls": [{"function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "name": "g", "content": "first g"},
        {"role": "tool", "content": "second g"},
        {"role": "tool", "tool_call_id": "nobody", "content": "orphan"},
        {"role": "assistant", "tool_calls": "junk", "content": [1, 2]},
    ]  # fmt: skip
    assert summary(messages) == [
        ("a", "f", {"x": 1}, {"y": 2}, None),
        (None, "g", {}, "first g", None),
        (None, "g", {}, "second g", None),
    ]


def test_returned_tool_calls_win_over_the_transcript(tmp_path: Path) -> None:
    def agent(case: Any) -> dict[str, Any]:
        return {"output": "x", "messages": OPENAI, "tool_calls": [{"name": "mine"}]}

    (t,) = evaluate([{"id": "a", "input": "q"}], agent, out=tmp_path / "run").trials()
    assert [c.name for c in t.tool_calls] == ["mine"]
    assert "trajectory_source" not in t.metadata


# --- properties -------------------------------------------------------------------------

_names = st.sampled_from(["search", "calc", "lookup"])
_fmt = st.sampled_from(["openai", "langchain", "anthropic", "genai"])


def _call_msg(fmt: str, cid: str, name: str, args: dict[str, int]) -> dict[str, Any]:
    if fmt == "openai":
        fn = {"name": name, "arguments": json.dumps(args)}
        return {
            "role": "assistant",
            "tool_calls": [{"id": cid, "type": "function", "function": fn}],
        }
    if fmt == "langchain":
        return {
            "type": "ai",
            "content": "",
            "tool_calls": [{"id": cid, "name": name, "args": args}],
        }
    if fmt == "anthropic":
        block = {"type": "tool_use", "id": cid, "name": name, "input": args}
        return {"role": "assistant", "content": [block]}
    part = {"type": "tool_call", "id": cid, "name": name, "arguments": args}
    return {"role": "assistant", "parts": [part]}


def _result_msg(fmt: str, cid: str, text: str) -> dict[str, Any]:
    if fmt == "openai":
        return {"role": "tool", "tool_call_id": cid, "content": text}
    if fmt == "langchain":
        return {"type": "tool", "tool_call_id": cid, "content": text}
    if fmt == "anthropic":
        block = {"type": "tool_result", "tool_use_id": cid, "content": text}
        return {"role": "user", "content": [block]}
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": cid, "result": text}]}


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[list[tuple[str, bool]], list[Any]]:
    """(call id, answered) per call in order, and a transcript in mixed formats."""
    n = draw(st.integers(0, 8))
    calls = [(f"id{i}", draw(_names), {"n": draw(st.integers(0, 9))}) for i in range(n)]
    fmts = [draw(_fmt) for _ in calls]
    call_msgs = [_call_msg(f, *c) for f, c in zip(fmts, calls, strict=True)]
    answered = [draw(st.booleans()) for _ in calls]
    results = [
        _result_msg(f, c[0], f"result of {c[0]}")
        for f, c, a in zip(fmts, calls, answered, strict=True)
        if a
    ]
    # Results go anywhere: before, between or after the calls, in any order.
    messages: list[Any] = list(call_msgs)
    for r in draw(st.permutations(results)):
        messages.insert(draw(st.integers(0, len(messages))), r)
    repeats = draw(st.lists(st.sampled_from(call_msgs), max_size=3)) if call_msgs else []
    messages.extend(repeats)  # a call seen again is the same call
    return [(c[0], a) for c, a in zip(calls, answered, strict=True)], messages


@settings(max_examples=150, deadline=None)
@given(transcripts())
def test_every_call_once_in_order_paired_by_id(data: Any) -> None:
    expected, messages = data
    calls = calls_from_messages(messages)
    assert [c.id for c in calls] == [cid for cid, _ in expected]  # once each, in call order
    for call, (cid, answered) in zip(calls, expected, strict=True):
        assert call.error is None
        assert call.result == (f"result of {cid}" if answered else None)
        assert isinstance(call.arguments, dict) and set(call.arguments) == {"n"}
