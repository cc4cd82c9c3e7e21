"""wrong_answer_cause: a wrong answer is a retrieval failure or a model failure."""

from __future__ import annotations

from agenteval.cases.case import Case
from agenteval.scorers import builtin_scorers, wrong_answer_cause
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score, not_applicable
from agenteval.trials.trial import Trial

WRONG = Score(0.0, "wrong")
RIGHT = Score(1.0, "right")


def test_missed_document_blames_retrieval() -> None:
    scores = {"exact_match": WRONG, "retrieval_recall": Score(0.5, "1/2")}
    assert wrong_answer_cause(scores) == "retrieval"


def test_every_document_found_blames_the_model() -> None:
    assert wrong_answer_cause({"exact_match": WRONG, "retrieval_recall": RIGHT}) == "model"


def test_no_attribution_otherwise() -> None:
    assert wrong_answer_cause({"exact_match": RIGHT, "retrieval_recall": Score(0.0, "")}) is None
    assert wrong_answer_cause({"retrieval_recall": Score(0.0, "")}) is None
    assert wrong_answer_cause({"exact_match": WRONG}) is None
    assert (
        wrong_answer_cause({"exact_match": WRONG, "retrieval_recall": not_applicable("")}) is None
    )
    assert (
        wrong_answer_cause({"exact_match": not_applicable(""), "retrieval_recall": RIGHT}) is None
    )


def test_on_real_scores() -> None:
    case = Case.model_validate(
        {"id": "c", "input": "q", "expected": "42", "relevant_docs": ["d1", "d2"]}
    )
    scorers = Scorers(builtin_scorers())
    calls = [{"name": "search", "arguments": {}, "result": "d1: the answer is 41"}]
    t = Trial.model_validate({"case_id": "c", "output": "41", "tool_calls": calls})
    assert wrong_answer_cause(scorers.apply(case, t)) == "retrieval"
    calls[0]["result"] = "d1 d2: the answer is 42"
    t = Trial.model_validate({"case_id": "c", "output": "41", "tool_calls": calls})
    assert wrong_answer_cause(scorers.apply(case, t)) == "model"
    t = Trial.model_validate({"case_id": "c", "output": "42", "tool_calls": calls})
    assert wrong_answer_cause(scorers.apply(case, t)) is None
