from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.case import Case
from agenteval.score import Score, normalize_result, scorer, scorer_name, scorer_threshold
from agenteval.scoring import Scorers
from agenteval.trial import Trial


def test_score_rejects_out_of_range_and_nan() -> None:
    with pytest.raises(ValueError):
        Score(1.5, "x")
    with pytest.raises(ValueError):
        Score(math.nan, "x")
    with pytest.raises(TypeError):
        Score(True, "x")  # type: ignore[arg-type]


def test_passed_uses_threshold_and_none_when_not_applicable() -> None:
    assert Score(0.5, "", threshold=0.5).passed is True
    assert Score(0.49, "", threshold=0.5).passed is False
    assert Score(None, "n/a").passed is None


@pytest.mark.parametrize(
    ("raw", "value", "error"),
    [
        (True, 1.0, False),
        (False, 0.0, False),
        (0.25, 0.25, False),
        (1, 1.0, False),
        ((0.5, "half"), 0.5, False),
        ((None, "does not apply"), None, False),
        (None, None, False),
        (Score(0.7, "given"), 0.7, False),
        (1.5, None, True),
        (-0.1, None, True),
        (float("nan"), None, True),
        ("good", None, True),
        ((1, 2, 3), None, True),
        ({"value": 1}, None, True),
    ],
)
def test_normalize_result(raw: object, value: float | None, error: bool) -> None:
    s = normalize_result(raw)
    assert s.value == value
    assert (s.error is not None) is error


@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=True),
        st.integers(),
        st.text(),
        st.tuples(st.floats(), st.text()),
    )
)
def test_normalize_result_never_raises_and_stays_in_range(raw: object) -> None:
    s = normalize_result(raw)
    assert s.value is None or 0.0 <= s.value <= 1.0


def test_scorer_decorator_sets_name_and_threshold() -> None:
    @scorer("polite", threshold=0.5)
    def f(case: Case, trial: Trial) -> float:
        return 0.6

    assert scorer_name(f) == "polite"
    assert scorer_threshold(f) == 0.5
    assert Scorers([f]).apply(Case(id="a", input="q"), Trial(case_id="a"))["polite"].passed


def test_a_scorer_that_raises_is_a_scorer_error_and_others_still_run() -> None:
    def boom(case: Case, trial: Trial) -> float:
        raise ZeroDivisionError("division by zero")

    def ok(case: Case, trial: Trial) -> bool:
        return True

    scores = Scorers([boom, ok]).apply(Case(id="a", input="q"), Trial(case_id="a"))
    assert scores["boom"].value is None
    assert scores["boom"].error is not None and "ZeroDivisionError" in scores["boom"].error
    assert scores["ok"].value == 1.0


def test_duplicate_scorer_names_are_refused() -> None:
    from agenteval.errors import InputError

    def a(case: Case, trial: Trial) -> bool:
        return True

    with pytest.raises(InputError, match="named 'a'"):
        Scorers([a, a])
