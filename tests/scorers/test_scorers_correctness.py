"""exact_match (SPEC §4, correctness)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.scorers import exact_match
from agenteval.trials.trial import Trial


def case(**kw: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "q", **kw})


def trial(output: str | None, **kw: Any) -> Trial:
    return Trial.model_validate({"case_id": "c", "output": output, **kw})


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("Paris", "paris"),
        ("Paris", "  PARIS. "),
        ("São Paulo", "Sao Paulo"),
        ("19,753", "19753.0"),
        (19753, "19,753"),
        (19753.0, "19753"),
        ("3.14", "3.145"),
        ("1e3", "1,000"),
        (-3.5, "-3.50"),
    ],
)
def test_matches(expected: Any, answer: str) -> None:
    s = exact_match(case(expected=expected), trial(answer))
    assert s.value == 1.0 and s.passed, s.reason


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("Paris", "Paris, France"),
        ("19,753", "19,754"),
        ("3.14", "3.16"),
        ("5", "$5"),
        ("60", "60%"),
        ("19753", "It is 19753"),
        ("New York", "New  York"),
        ("a", "a.."),
    ],
)
def test_mismatches(expected: Any, answer: str) -> None:
    s = exact_match(case(expected=expected), trial(answer))
    assert s.value == 0.0 and s.passed is False


def test_numeric_reason_shows_the_difference() -> None:
    s = exact_match(case(expected="19,753"), trial("19754"))
    assert s.reason == "expected 19753, got 19754: differ by 1, more than 0.01"
    s = exact_match(case(expected="19,753"), trial("19753.0"))
    assert s.reason == "expected 19753, got 19753: differ by 0, within 0.01"


def test_text_reason_quotes_both() -> None:
    s = exact_match(case(expected="Paris"), trial("Lyon"))
    assert s.reason == 'expected "Paris", got "Lyon"'


def test_not_applicable_without_expected() -> None:
    s = exact_match(case(), trial("anything"))
    assert s.value is None and s.reason == "case has no expected answer"


def test_not_applicable_when_agent_never_answered() -> None:
    s = exact_match(
        case(expected="x"), trial(None, failure={"cause": "timeout", "message": "30 s"})
    )
    assert s.value is None
    assert s.reason == "agent never answered (failure: timeout)"
    s = exact_match(case(expected="x"), trial(None))
    assert s.reason == "agent never answered (no failure recorded)"


def test_empty_answer_is_judged_not_skipped() -> None:
    assert exact_match(case(expected="x"), trial("")).value == 0.0


_word = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12)
_accentable = st.text(alphabet="aeiouncAEIOUNC xyz", min_size=1, max_size=20)


@given(
    expected=st.lists(_word, min_size=1, max_size=4).map(" ".join),
    upper=st.booleans(),
    pad_left=st.sampled_from(["", " ", "\t", "\n  "]),
    pad_right=st.sampled_from(["", " ", "\n"]),
    period=st.booleans(),
)
def test_invariant_under_case_space_and_final_period(
    expected: str, upper: bool, pad_left: str, pad_right: str, period: bool
) -> None:
    answer = expected.upper() if upper else expected.lower()
    answer = pad_left + answer + ("." if period else "") + pad_right
    assert exact_match(case(expected=expected), trial(answer)).value == 1.0


@given(_accentable, st.sampled_from(["\u0301", "\u0300", "\u0303", "\u0308"]))
def test_invariant_under_accents(expected: str, mark: str) -> None:
    assume(expected.strip() and not expected.strip().endswith("."))
    accented = "".join(c + mark if c.isalpha() else c for c in expected)
    assert exact_match(case(expected=expected), trial(accented)).value == 1.0


@given(st.text(max_size=30), st.text(max_size=30))
def test_any_text_gives_a_binary_symmetric_verdict(expected: str, answer: str) -> None:
    s = exact_match(case(expected=expected), trial(answer))
    assert s.value in (0.0, 1.0)
    assert s.value == exact_match(case(expected=answer), trial(expected)).value
