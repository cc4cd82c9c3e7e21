"""Trials whose source did not record everything: which scores cannot be given.

A trial imported from traces may lack content its instrumentation left out (prompts and
answers redacted, tool arguments and results opt-in and off). Its
``metadata["not_recorded"]`` lists what is missing, among :data:`CONTENT`:

- ``input``: the prompt (the case input is a placeholder);
- ``output``: the final answer (``output`` is None);
- ``tool_arguments``: the arguments of at least one tool call;
- ``tool_results``: the result of at least one tool call that did not fail.

A scorer that needs missing content is **not applicable** to that trial, never 0:
:func:`not_recorded_score` gives the score for the built-in scorers listed in
:data:`SCORER_NEEDS` (custom scorers run as usual and can read the metadata themselves),
and a judge rubric whose template uses ``{input}``, ``{output}`` or ``{tool_results}`` is
not applicable when that content is missing.
"""

from __future__ import annotations

from collections.abc import Iterable

from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial
from agenteval.trials.unrecorded import CONTENT, NOT_RECORDED

__all__ = ["CONTENT", "NOT_RECORDED", "SCORER_NEEDS", "missing_for", "not_recorded_score"]


SCORER_NEEDS: dict[str, frozenset[str]] = {
    "exact_match": frozenset({"output"}),
    "tool_arguments_valid": frozenset({"tool_arguments"}),
    "tool_execution": frozenset({"tool_arguments"}),
    "tool_call_match": frozenset({"tool_arguments"}),
    "redundant_calls": frozenset({"tool_arguments"}),
    "tool_faithfulness": frozenset({"output", "tool_results"}),
    "retrieval_recall": frozenset({"tool_results"}),
    "tool_grounding": frozenset({"output", "tool_results"}),
    "avoids_forbidden_text": frozenset({"output"}),
    "pii_leakage": frozenset({"output"}),
    "wrong_answer_cause": frozenset({"output", "tool_arguments", "tool_results"}),
}
"""What each built-in scorer reads that a trace may not have recorded."""


def missing_for(trial: Trial, needs: Iterable[str]) -> list[str]:
    """The content among ``needs`` that the trial's source did not record, in
    :data:`CONTENT` order (empty for every trial made by agenteval itself)."""
    meta = trial.metadata
    listed = meta.get(NOT_RECORDED) if meta else None
    if not listed or not isinstance(listed, list):
        return []
    wanted = set(needs)
    return [c for c in CONTENT if c in listed and c in wanted]


def reason(missing: list[str]) -> str:
    """``not applicable: the trace did not record the tool arguments``."""
    return "not applicable: the trace did not record the " + " and ".join(
        m.replace("_", " ") for m in missing
    )


def not_recorded_score(name: str, trial: Trial, threshold: float) -> Score | None:
    """The not-applicable score of built-in scorer ``name`` for a trial missing content it
    needs; None when the scorer applies as usual."""
    needs = SCORER_NEEDS.get(name)
    if needs is None:
        return None
    missing = missing_for(trial, needs)
    return Score(None, reason(missing), threshold) if missing else None
