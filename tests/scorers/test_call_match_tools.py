"""trajectory_order's match modes and redundant_calls' non-idempotent tools."""

from __future__ import annotations

from typing import Any

import pytest

from agenteval.cases.case import Case
from agenteval.cases.tooldefs import as_openai_tools, normalize_tool_defs
from agenteval.scorers import builtin_scorers, redundant_calls, trajectory_order
from agenteval.trials.trial import Trial


def _trial(*names: str, args: Any = None, tools: Any = None) -> Trial:
    return Trial.model_validate(
        {
            "case_id": "c",
            "output": "ok",
            "tool_calls": [{"name": n, "arguments": args or {}} for n in names],
            "tools": tools,
        }
    )


def _traj(steps: list[str], mode: str | None) -> Case:
    return Case.model_validate(
        {"id": "c", "input": "q", "expected_trajectory": steps, "match_mode": mode}
    )


def test_without_a_mode_the_old_subsequence_rule_holds() -> None:
    case = _traj(["search", "book"], None)
    assert trajectory_order(case, _trial("search", "x", "book", "y")).value == 1.0
    s = trajectory_order(case, _trial("book", "search"))
    assert s.value == 0.0 and "then book never called" in s.reason


@pytest.mark.parametrize(
    ("mode", "made", "value"),
    [
        ("strict", ["search", "book"], 1.0),
        ("strict", ["search", "search", "book"], 2 / 3),
        ("strict", ["book", "search"], 1 / 3),
        ("unordered", ["book", "search"], 1.0),
        ("unordered", ["book", "search", "search"], 2 / 3),
        ("subset", ["x", "book", "search"], 1.0),
        ("superset", ["book"], 1.0),
        ("superset", ["book", "x"], 1 / 2),
        ("in_order", ["search", "x", "book"], 1.0),
        ("in_order", ["book", "x", "search"], 1 / 2),  # LCS partial credit
    ],
)
def test_modes_grade_by_matching(mode: str, made: list[str], value: float) -> None:
    """Pass/fail (the scorer's kind), with the partial score in the reason."""
    s = trajectory_order(_traj(["search", "book"], mode), _trial(*made))
    assert s.value == (1.0 if value == 1.0 else 0.0), s.reason
    assert s.passed is (value == 1.0)
    if value < 1.0:
        assert f"= {value:.3g}:" in s.reason


def test_exactly_one_call() -> None:
    case = _traj(["search"], "unordered")
    assert trajectory_order(case, _trial("search")).value == 1.0
    twice = trajectory_order(case, _trial("search", "search"))
    assert twice.value == 0.0 and "partial 1/2 = 0.5: not expected: #2 search" in twice.reason


def test_strict_reason_names_the_step() -> None:
    s = trajectory_order(_traj(["search", "book"], "strict"), _trial("search", "pay"))
    assert s.reason.endswith("step 2: expected book, got pay")


RANDOM = {"name": "random.normalvariate", "parameters": {"type": "object"}, "x-idempotent": False}


def test_non_idempotent_tools_may_repeat() -> None:
    twice = _trial("random.normalvariate", "random.normalvariate", args={"mu": 0, "sigma": 1})
    assert redundant_calls(Case(id="c", input="q"), twice).value == 0.0
    marked = Case(id="c", input="q", tools=[RANDOM])
    assert redundant_calls(marked, twice).value == 1.0
    on_trial = twice.model_copy(update={"tools": normalize_tool_defs([RANDOM])})
    assert redundant_calls(Case(id="c", input="q"), on_trial).value == 1.0
    suite = {f.name: f for f in builtin_scorers(suite_tools=[RANDOM])}
    assert suite["redundant_calls"](Case(id="c", input="q"), twice).value == 1.0


def test_the_mark_is_kept_but_never_sent_to_a_model() -> None:
    (d,) = normalize_tool_defs([{"type": "function", "function": RANDOM}])
    assert d["x-idempotent"] is False
    assert "x-idempotent" not in as_openai_tools([d])[0]["function"]
    with pytest.raises(ValueError, match="x-idempotent"):
        normalize_tool_defs([{**RANDOM, "x-idempotent": "no"}])
