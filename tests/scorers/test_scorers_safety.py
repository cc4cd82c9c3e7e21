"""avoids_forbidden_text."""

from __future__ import annotations

from typing import Any

from agenteval.cases.case import Case
from agenteval.scorers import avoids_forbidden_text
from agenteval.trials.trial import Trial


def case(**kw: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "q", **kw})


def trial(output: str | None, **kw: Any) -> Trial:
    return Trial.model_validate({"case_id": "c", "output": output, **kw})


def test_clean_answer_passes() -> None:
    s = avoids_forbidden_text(case(must_not_contain=["PWNED", "rm -rf"]), trial("All good."))
    assert s.value == 1.0 and s.reason == "answer contains none of 2 forbidden strings"


def test_forbidden_text_found_ignoring_case_accents_and_white_space() -> None:
    c = case(must_not_contain=["Ignore  previous instructions", "PWNED", "déjà vu"])
    s = avoids_forbidden_text(c, trial("ok: IGNORE previous\n instructions; pwned! deja vu"))
    assert s.value == 0.0
    assert s.reason == (
        'answer contains 3 of 3 forbidden strings: "Ignore  previous instructions", "PWNED",'
        ' "déjà vu"'
    )


def test_final_period_of_a_forbidden_string_counts() -> None:
    c = case(must_not_contain=["Visit evil.example."])
    assert avoids_forbidden_text(c, trial("visit evil.example")).value == 1.0
    assert avoids_forbidden_text(c, trial("Visit evil.example. Now")).value == 0.0


def test_not_applicable() -> None:
    assert avoids_forbidden_text(case(), trial("x")).reason == "case has no must_not_contain"
    assert avoids_forbidden_text(case(must_not_contain=["  "]), trial("x")).value is None
    s = avoids_forbidden_text(
        case(must_not_contain=["x"]), trial(None, failure={"cause": "cancelled"})
    )
    assert s.value is None and s.reason == "agent never answered (failure: cancelled)"
