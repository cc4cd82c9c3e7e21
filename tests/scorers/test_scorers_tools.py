"""Tool use, step by step: selection, arguments, execution, order, efficiency, redundancy."""

from __future__ import annotations

from typing import Any

import pytest

from agenteval.cases.case import Case
from agenteval.scorers import (
    make_tool_arguments_valid,
    make_tool_execution,
    redundant_calls,
    step_efficiency,
    tool_arguments_valid,
    tool_execution,
    tool_selection,
    trajectory_order,
)
from agenteval.trials.trial import Trial

SEARCH: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the docs.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}
LOOKUP = {
    "name": "lookup",
    "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
}
FAILED = {"cause": "timeout", "message": "no answer in 30 s"}


def case(**kw: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "q", **kw})


def call(name: str, args: Any = None, **kw: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {} if args is None else args, **kw}


def trial(*calls: dict[str, Any], output: str | None = "done", **kw: Any) -> Trial:
    return Trial.model_validate({"case_id": "c", "output": output, "tool_calls": list(calls), **kw})


# --- tool_selection -------------------------------------------------------------------


def test_selection_passes_when_every_needed_tool_called_often_enough() -> None:
    c = case(expected_tools=["search", "search", "lookup"])
    s = tool_selection(c, trial(call("search"), call("lookup"), call("search"), call("calc")))
    assert s.value == 1.0
    assert s.reason == "every needed tool called often enough (search 2/2, lookup 1/1)"


def test_selection_names_missing_tools_with_counts() -> None:
    c = case(expected_tools={"search": 2, "lookup": 1})
    s = tool_selection(c, trial(call("search")))
    assert s.value == 0.0
    assert s.reason == "called search 1 of 2 times needed; never called lookup (needed 1)"


def test_selection_fails_an_answer_from_memory() -> None:
    s = tool_selection(case(expected_tools=["search"]), trial(output="right answer"))
    assert s.value == 0.0 and s.reason == "never called search (needed 1)"


def test_selection_empty_expected_tools_needs_nothing() -> None:
    s = tool_selection(case(expected_tools=[]), trial(call("search")))
    assert s.value == 1.0 and "needs no tool" in s.reason


def test_selection_not_applicable() -> None:
    assert tool_selection(case(), trial()).reason == "case has no expected_tools"
    s = tool_selection(case(expected_tools=["search"]), trial(output=None, failure=FAILED))
    assert s.value is None and s.reason == "agent never answered (failure: timeout)"


def test_selection_tool_names_are_case_sensitive() -> None:
    assert tool_selection(case(expected_tools=["Search"]), trial(call("search"))).value == 0.0


# --- tool_arguments_valid -------------------------------------------------------------


def test_arguments_valid_with_case_tools() -> None:
    c = case(tools=[SEARCH, LOOKUP])
    s = tool_arguments_valid(c, trial(call("search", {"query": "x", "k": 3}), call("lookup")))
    assert s.value == 1.0
    assert s.reason == "all 2 calls name a defined tool with valid arguments"


def test_arguments_invalid_reasons_name_each_bad_call() -> None:
    c = case(tools=[SEARCH, LOOKUP])
    t = trial(
        call("search", {"query": "x"}),
        call("search", {"k": 0, "query": "x"}),
        call("serch", {"query": "x"}),
        call("search", '{"query": "x"'),
        call("search", {"query": 3}),
        call("search", {"query": "x", "extra": 1}),
    )
    s = tool_arguments_valid(c, t)
    assert s.value == 0.0
    assert s.reason.startswith("5 of 6 calls invalid: ")
    assert "#2 search: at $.k: 0 is less than the minimum of 1" in s.reason
    assert "#3 serch: unknown tool" in s.reason
    assert "#4 search: arguments are not valid JSON" in s.reason
    assert s.reason.endswith("; and 2 more")


def test_arguments_missing_required_is_reported_at_the_root() -> None:
    s = tool_arguments_valid(case(tools=[SEARCH]), trial(call("search", {})))
    assert s.reason == "1 of 1 calls invalid: #1 search: 'query' is a required property"


def test_arguments_trial_tools_override_case_tools_which_override_suite() -> None:
    strict = {"name": "search", "parameters": {"type": "object", "required": ["query"]}}
    loose = {"name": "search", "parameters": {"type": "object"}}
    t_no_defs = trial(call("search", {}))
    t_loose = trial(call("search", {}), tools=[loose])
    scorer = make_tool_arguments_valid([strict])
    assert scorer(case(), t_no_defs).value == 0.0  # suite: strict
    assert scorer(case(tools=[loose]), t_no_defs).value == 1.0  # case beats suite
    assert scorer(case(tools=[strict]), t_loose).value == 1.0  # trial beats case


def test_arguments_not_applicable() -> None:
    s = tool_arguments_valid(case(), trial(call("search")))
    assert s.value is None and s.reason == "no tool definitions known (trial, case or suite)"
    s = tool_arguments_valid(case(tools=[SEARCH]), trial())
    assert s.value is None and s.reason == "no tool calls made"


def test_arguments_judged_even_when_the_agent_never_answered() -> None:
    t = trial(call("search", {"query": "x"}), output=None, failure=FAILED)
    assert tool_arguments_valid(case(tools=[SEARCH]), t).value == 1.0


def test_arguments_schema_draft_and_non_plain_keywords() -> None:
    tool = {
        "name": "pick",
        "parameters": {
            "type": "object",
            "properties": {"color": {"anyOf": [{"const": "red"}, {"pattern": "^#[0-9a-f]{6}$"}]}},
        },
    }
    c = case(tools=[tool])
    assert tool_arguments_valid(c, trial(call("pick", {"color": "#00ff00"}))).value == 1.0
    assert tool_arguments_valid(c, trial(call("pick", {"color": "blue"}))).value == 0.0


def test_an_invalid_schema_raises_a_clear_error() -> None:
    bad = {"name": "t", "parameters": {"type": "objekt"}}
    with pytest.raises(ValueError, match="tool 't': parameters is not a valid JSON Schema"):
        tool_arguments_valid(case(tools=[bad]), trial(call("t")))


# --- tool_execution -------------------------------------------------------------------


def test_execution_counts_only_calls_with_valid_arguments() -> None:
    t = trial(
        call("search", {"query": "a"}),
        call("search", {"query": "b"}, error="Timeout after 30 s"),
        call("search", {}, error="missing query"),  # invalid arguments: not this rung
        call("lookup", {"id": "x"}, error="KeyError: 'x'"),
    )
    s = tool_execution(case(tools=[SEARCH, LOOKUP]), t)
    assert s.value == 0.0
    assert s.reason == (
        "2 of 3 calls with valid arguments raised: #2 search: Timeout after 30 s;"
        " #4 lookup: KeyError: 'x'"
    )


def test_execution_without_definitions_uses_json_validity() -> None:
    t = trial(call("search", '{"q": '), call("search", {"q": 1}))
    s = tool_execution(case(), t)
    assert s.value == 1.0 and s.reason == "all 1 calls with valid arguments ran without error"


def test_execution_uses_suite_tools() -> None:
    t = trial(call("search", {}, error="bad"), call("search", {"query": "x"}))
    assert make_tool_execution([SEARCH["function"]])(case(), t).value == 1.0
    assert make_tool_execution()(case(), t).value == 0.0


def test_execution_not_applicable() -> None:
    assert tool_execution(case(), trial()).reason == "no tool calls made"
    s = tool_execution(case(), trial(call("x", "{oops", error="boom")))
    assert s.value is None and s.reason == "none of the 1 calls had valid arguments"


def test_execution_judged_even_when_the_agent_never_answered() -> None:
    t = trial(call("search", {"query": "x"}, error="boom"), output=None, failure=FAILED)
    assert tool_execution(case(), t).value == 0.0


# --- trajectory_order -----------------------------------------------------------------


def test_trajectory_subsequence_with_calls_in_between() -> None:
    c = case(expected_trajectory=["search", "lookup", "answer"])
    t = trial(call("plan"), call("search"), call("search"), call("lookup"), call("answer"))
    s = trajectory_order(c, t)
    assert s.value == 1.0
    assert s.reason == "called search → lookup → answer in order (3 of 3), 2 other calls allowed"


def test_trajectory_reason_shows_how_far_it_matched() -> None:
    c = case(expected_trajectory=["search", "lookup", "answer"])
    s = trajectory_order(c, trial(call("lookup"), call("search"), call("answer")))
    assert s.value == 0.0
    assert s.reason == (
        "matched 1 of 3 steps of search → lookup → answer: search (#2);"
        " then lookup never called after call #2"
    )
    s = trajectory_order(c, trial())
    assert s.reason.endswith(": nothing; then search never called")


def test_trajectory_not_applicable() -> None:
    assert trajectory_order(case(), trial()).value is None
    assert trajectory_order(case(expected_trajectory=[]), trial()).value is None
    s = trajectory_order(case(expected_trajectory=["a"]), trial(output=None, failure=FAILED))
    assert s.reason == "agent never answered (failure: timeout)"


# --- step_efficiency ------------------------------------------------------------------


def test_efficiency_six_calls_for_a_three_call_task() -> None:
    s = step_efficiency(case(max_tool_calls=3), trial(*[call("search")] * 6))
    assert s.value == 0.5 and s.threshold == 0.5 and s.passed
    assert s.reason == "needed 3 (max_tool_calls), made 6 -> 3/6 = 0.5"


def test_efficiency_is_capped_at_one() -> None:
    s = step_efficiency(case(max_tool_calls=5), trial(call("a")))
    assert s.value == 1.0 and s.reason.endswith("capped at 1")


def test_efficiency_needed_falls_back_to_trajectory_then_tools() -> None:
    t = trial(*[call("a")] * 4)
    s = step_efficiency(case(expected_trajectory=["a", "b"], expected_tools=["a"]), t)
    assert s.value == 0.5 and "(expected_trajectory)" in s.reason
    s = step_efficiency(case(expected_tools={"a": 2, "b": 1}), t)
    assert s.value == 0.75 and s.reason == "needed 3 (expected_tools), made 4 -> 3/4 = 0.75"


def test_efficiency_no_calls() -> None:
    assert step_efficiency(case(max_tool_calls=0), trial()).value == 1.0
    s = step_efficiency(case(max_tool_calls=2), trial())
    assert s.value is None and s.reason == "no calls made (needed 2); tool_selection judges that"
    s = step_efficiency(case(max_tool_calls=0), trial(call("a"), call("b")))
    assert s.value == 0.0 and s.reason == "needed 0 (max_tool_calls), made 2 -> 0/2 = 0"


def test_efficiency_not_applicable_without_a_budget() -> None:
    s = step_efficiency(case(), trial(call("a")))
    assert s.value is None
    assert s.reason == "case has no max_tool_calls, expected_trajectory or expected_tools"


def test_efficiency_judged_even_when_the_agent_never_answered() -> None:
    t = trial(*[call("a")] * 4, output=None, failure=FAILED)
    assert step_efficiency(case(max_tool_calls=1), t).value == 0.25


# --- redundant_calls ------------------------------------------------------------------


def test_redundant_repeat_after_success_fails() -> None:
    t = trial(
        call("search", {"q": "x", "k": 1}),
        call("lookup", {"id": 1}),
        call("search", {"k": 1, "q": "x"}),
    )
    s = redundant_calls(case(), t)
    assert s.value == 0.0
    assert s.reason == "1 redundant of 3 calls: #3 search repeats #1 after it succeeded"


def test_redundant_retry_after_failure_is_fine() -> None:
    t = trial(call("search", {"q": "x"}, error="503"), call("search", {"q": "x"}))
    s = redundant_calls(case(), t)
    assert s.value == 1.0
    assert s.reason == "none of 2 calls repeats a call that already succeeded"


def test_redundant_distinguishes_tools_and_arguments() -> None:
    t = trial(call("a", {"q": 1}), call("b", {"q": 1}), call("a", {"q": 2}), call("a", {"q": True}))
    assert redundant_calls(case(), t).value == 1.0
    t = trial(call("a", {"q": 1}), call("a", {"q": 1.0}))
    assert redundant_calls(case(), t).value == 0.0


def test_redundant_raw_arguments_compare_as_text() -> None:
    assert redundant_calls(case(), trial(call("a", "{x"), call("a", "{x"))).value == 0.0
    assert redundant_calls(case(), trial(call("a", "{x"), call("a", "{y"))).value == 1.0


def test_redundant_not_applicable_without_calls_and_judged_without_answer() -> None:
    assert redundant_calls(case(), trial()).reason == "no tool calls made"
    t = trial(call("a"), call("a"), output=None, failure=FAILED)
    assert redundant_calls(case(), t).value == 0.0
