"""Why an answer was wrong: crossing ``exact_match`` with ``retrieval_recall`` (SPEC §4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from agenteval.scoring.score import Score

Cause = Literal["retrieval", "model"]


def wrong_answer_cause(scores: Mapping[str, Score]) -> Cause | None:
    """Blame a wrong answer on retrieval or on the model, from one trial's scores.

    Only a trial whose ``exact_match`` applies and failed is attributed:

    - ``"retrieval"`` when ``retrieval_recall`` applies and is below 1 (a relevant
      document was missed, so the model could not have known);
    - ``"model"`` when ``retrieval_recall`` is 1 (every relevant document was found, and
      the model still answered wrongly).

    None otherwise: the answer was right, ``exact_match`` is missing or not applicable, or
    ``retrieval_recall`` is missing or not applicable.
    """
    em = scores.get("exact_match")
    if em is None or em.passed is not False:
        return None
    rr = scores.get("retrieval_recall")
    if rr is None or rr.value is None:
        return None
    return "retrieval" if rr.value < 1.0 else "model"
