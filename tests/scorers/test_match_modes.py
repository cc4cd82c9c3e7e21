"""``tool_call_match`` and ``trajectory_order`` share one match-mode arithmetic
(:mod:`agenteval.scorers._match`): on calls compared by name only, both agree with it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval._util.text import ratio
from agenteval.cases.case import Case
from agenteval.scorers._match import MATCH_MODES, ModeMatch, match_in_mode
from agenteval.scorers.call_match import tool_call_match
from agenteval.scorers.tools import trajectory_order
from agenteval.trials.trial import ToolCall, Trial

NAMES = st.lists(st.sampled_from(["search", "read", "book"]), max_size=5)


def _by_name(expected: list[str], made: list[str], mode: str) -> ModeMatch:
    return match_in_mode([[e == a for a in made] for e in expected], len(made), mode)


def _trial(made: list[str]) -> Trial:
    calls = [ToolCall(name=n, arguments={}) for n in made]
    return Trial(case_id="c", output="done", tool_calls=calls)


@settings(max_examples=150, deadline=None)
@given(NAMES, NAMES, st.sampled_from(MATCH_MODES))
def test_tool_call_match_on_names_is_the_shared_arithmetic(
    expected: list[str], made: list[str], mode: str
) -> None:
    calls = [{"name": n, "extra_arguments": True} for n in expected]
    case = Case(id="c", input="q", expected_calls=calls, match_mode=mode)
    score = tool_call_match(case, _trial(made))
    one = _by_name(expected, made, mode)
    assert score.value == one.value
    assert f"{one.matched} of {one.expected} expected calls matched" in score.reason or (
        one.expected == 0
    )


@settings(max_examples=150, deadline=None)
@given(NAMES.filter(bool), NAMES, st.sampled_from(MATCH_MODES))
def test_trajectory_order_in_a_mode_passes_exactly_when_the_shared_arithmetic_says_so(
    expected: list[str], made: list[str], mode: str
) -> None:
    case = Case(id="c", input="q", expected_trajectory=expected, match_mode=mode)
    score = trajectory_order(case, _trial(made))
    one = _by_name(expected, made, mode)
    assert score.value == (1.0 if one.value >= 1.0 else 0.0)
    head = f"matched {one.matched} of {one.expected} steps, {one.made} calls made ({mode})"
    assert score.reason.startswith(head)
    if one.value < 1.0:
        assert f"partial {ratio(one.matched, one.denominator)}" in score.reason


def test_the_arithmetic_by_hand() -> None:
    # expected a, b; made b, a, c: 2 matched unordered, 1 in order
    expected, made = ["a", "b"], ["b", "a", "c"]
    got = {m: _by_name(expected, made, m) for m in MATCH_MODES}
    assert {m: (r.matched, r.denominator) for m, r in got.items()} == {
        "strict": (1, 4),  # k/(n+m-k) = 1/4
        "unordered": (2, 3),
        "subset": (2, 2),
        "superset": (2, 3),
        "in_order": (1, 2),
    }
    assert got["subset"].value == 1.0
    assert _by_name([], [], "strict").value == 1.0  # 0/0 is 1.0
    assert _by_name([], ["a"], "superset").value == 0.0
