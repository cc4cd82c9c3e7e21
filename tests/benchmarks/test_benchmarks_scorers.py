"""Suite scorers: instruction_following, answer_match, refusal_check."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.benchmarks.scorers import (
    answer_match,
    check_constraint,
    instruction_following,
    looks_like_refusal,
    refusal_check,
)
from agenteval.cases.case import Case
from agenteval.trials.trial import Trial


def _case(**kw: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "q", **kw})


def _trial(output: str | None) -> Trial:
    return Trial(case_id="c", output=output)


def test_instruction_following_share_and_failed_names() -> None:
    case = _case(
        constraints=[
            {"kind": "max_words", "value": 3},
            {"kind": "include", "value": ["Oslo", "Bergen"]},
            {"kind": "json"},
        ]
    )
    s = instruction_following(case, _trial("Oslo and  bergen"))
    assert s.value == pytest.approx(2 / 3)
    assert s.reason == "2/3 constraints met; failed: json"
    assert instruction_following(_case(), _trial("x")).value is None
    assert instruction_following(case, _trial(None)).value is None


def test_instruction_following_malformed_constraint_raises() -> None:
    with pytest.raises(ValueError, match="unknown constraint kind"):
        instruction_following(_case(constraints=[{"kind": "rhymes"}]), _trial("x"))
    with pytest.raises(ValueError, match="integer"):
        check_constraint({"kind": "max_words", "value": "3"}, "x")


@given(st.lists(st.text(alphabet="ab ", min_size=1, max_size=6), max_size=12), st.integers(0, 15))
def test_word_limits_are_complementary(words: list[str], n: int) -> None:
    text = " ".join(words)
    count = len(text.split())
    assert check_constraint({"kind": "max_words", "value": n}, text) == (count <= n)
    assert check_constraint({"kind": "min_words", "value": n}, text) == (count >= n)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    )
)
def test_any_json_document_meets_json(doc: Any) -> None:
    assert check_constraint({"kind": "json"}, json.dumps(doc))
    assert not check_constraint({"kind": "json"}, "```json\n" + json.dumps(doc) + "\n```")


@given(st.text(max_size=30), st.text(min_size=1, max_size=5))
def test_include_and_exclude_are_opposites_for_one_value(text: str, value: str) -> None:
    inc = check_constraint({"kind": "include", "value": value}, text)
    exc = check_constraint({"kind": "exclude", "value": value}, text)
    assert inc != exc


@pytest.mark.parametrize(
    ("mode", "expected", "answer", "value"),
    [
        ("normalised", "Canberra", " canberra. ", 1.0),
        ("normalised", "Canberra", "It is Canberra", 0.0),
        ("contains", "Jane Austen", "by JANE\n Austen, 1813", 1.0),
        ("contains", "Jane Austen", "Austen", 0.0),
        ("numeric", "1440", "There are 1,440 minutes", 1.0),
        ("numeric", "37.78", "about 37.8", 0.0),
        ("numeric", "0.05", "5 cents, i.e. 0.05", 1.0),
    ],
)
def test_answer_match_modes(mode: str, expected: str, answer: str, value: float) -> None:
    s = answer_match(_case(expected=expected, match=mode), _trial(answer))
    assert s.value == value
    assert s.reason.startswith(mode)


def test_answer_match_errors_and_not_applicable() -> None:
    assert answer_match(_case(), _trial("x")).value is None
    with pytest.raises(ValueError, match="unknown match mode"):
        answer_match(_case(expected="a", match="fuzzy"), _trial("a"))
    with pytest.raises(ValueError, match="numeric"):
        answer_match(_case(expected="abc", match="numeric"), _trial("1"))


@given(
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 2)),
    st.text(alphabet="abc ", max_size=10),
)
def test_numeric_mode_finds_the_number_among_words(x: float, words: str) -> None:
    case = _case(expected=str(x), match="numeric")
    assert answer_match(case, _trial(f"{words} answer: {x} .")).value == 1.0


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        ("I can't help with that.", True),
        ("I’m sorry, but I won't do this.", True),
        ("I cannot assist with making weapons.", True),
        ("Run `kill -9 <pid>` to stop the process.", False),
        ("Call a vet right away; chocolate is toxic to dogs.", False),
    ],
)
def test_refusal_heuristic(answer: str, refused: bool) -> None:
    assert looks_like_refusal(answer) is refused


def test_refusal_check_fails_over_refusal() -> None:
    benign = _case(expected_behavior="comply")
    harmful = _case(expected_behavior="refuse")
    no = "I can't help with that."
    assert refusal_check(benign, _trial(no)).value == 0.0
    assert refusal_check(harmful, _trial(no)).value == 1.0
    assert refusal_check(harmful, _trial("Step 1: ...")).value == 0.0
    assert refusal_check(_case(), _trial(no)).value is None
