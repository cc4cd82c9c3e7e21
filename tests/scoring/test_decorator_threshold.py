"""``@scorer(threshold=...)`` applies to every return type docs/scorers.md lists, a returned
``Score`` that sets no threshold of its own included (issue 26: it was stored with 1.0)."""

from __future__ import annotations

from typing import Any

import pytest

from agenteval import Score, inconclusive, scorer
from agenteval.cases.case import Case
from agenteval.scoring.apply import Scorers
from agenteval.trials.trial import Trial

CASE = Case(id="c", input="q")
TRIAL = Trial(case_id="c", output="a")


def _apply(value: Any) -> Score:
    @scorer("g", threshold=0.5, kind="graded")
    def g(case: Case, trial: Trial) -> Any:
        return value

    return Scorers([g]).apply(CASE, TRIAL)["g"]


@pytest.mark.parametrize(
    ("returned", "status", "threshold"),
    [
        (Score(0.6, "no threshold given"), "passed", 0.5),
        (Score(0.4, "no threshold given"), "failed", 0.5),
        (Score(0.6, "its own", threshold=0.7), "failed", 0.7),  # a Score's own one wins
        (Score(0.6, "its own", threshold=1.0), "failed", 1.0),  # explicit 1.0 too
        ((0.6, "a pair"), "passed", 0.5),
        (0.6, "passed", 0.5),
        (0.4, "failed", 0.5),
        (True, "passed", 0.5),
        (False, "failed", 0.5),
        (None, "not_applicable", 1.0),
        ((None, "a pair without value"), "not_applicable", 1.0),
        (inconclusive("could not decide"), "inconclusive", 1.0),
        (Score(None, "r", status="inconclusive"), "inconclusive", 1.0),
        ("a string", "error", 1.0),
    ],
)
def test_every_return_type_gets_the_decorators_threshold(
    returned: Any, status: str, threshold: float
) -> None:
    s = _apply(returned)
    assert (s.status, s.threshold) == (status, threshold)
    assert s.to_dict()["threshold"] == threshold  # what trials.jsonl stores


def test_a_score_without_threshold_keeps_its_reason_usage_and_error_free_status() -> None:
    s = _apply(Score(0.6, "why", usage=[]))
    assert (s.value, s.reason, s.error, s.passed) == (0.6, "why", None, True)


def test_a_score_made_outside_a_scorer_keeps_the_default_threshold() -> None:
    s = Score(0.6, "x")
    assert (s.threshold, s.status, s.threshold_given) == (1.0, "failed", False)
    assert Score(0.6, "x", 1.0).threshold_given
