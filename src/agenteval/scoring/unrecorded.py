"""Trials whose source did not record everything: which scores cannot be given.

A trial imported from traces may lack content its instrumentation left out (prompts and
answers redacted, tool arguments and results opt-in and off). Its
``metadata["not_recorded"]`` lists what is missing, among :data:`CONTENT`:

- ``input``: the prompt (the case input is a placeholder);
- ``output``: the final answer (``output`` is None);
- ``tool_calls``: which tools were called at all (model calls were seen, with no
  message content and no tool span: the trial's empty ``tool_calls`` does not mean none);
- ``tool_arguments``: the arguments of at least one tool call;
- ``tool_results``: the result of at least one tool call that did not fail.

``metadata["not_recorded_reason"]``, when set, names the setting that would have
recorded it (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``...); the
not-applicable reason ends with it.

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
from agenteval.trials.unrecorded import CONTENT, NOT_RECORDED, NOT_RECORDED_REASON

__all__ = ["CONTENT", "NOT_RECORDED", "SCORER_NEEDS", "missing_for", "not_recorded_score"]


SCORER_NEEDS: dict[str, frozenset[str]] = {
    "exact_match": frozenset({"output"}),
    "tool_selection": frozenset({"tool_calls"}),
    "trajectory_order": frozenset({"tool_calls"}),
    "step_efficiency": frozenset({"tool_calls"}),
    "tool_arguments_valid": frozenset({"tool_calls", "tool_arguments"}),
    "tool_execution": frozenset({"tool_calls", "tool_arguments", "tool_results"}),
    "tool_call_match": frozenset({"tool_calls", "tool_arguments"}),
    "redundant_calls": frozenset({"tool_calls", "tool_arguments"}),
    "tool_faithfulness": frozenset({"output", "tool_calls", "tool_results"}),
    "retrieval_recall": frozenset({"tool_calls", "tool_results"}),
    "tool_grounding": frozenset({"output", "tool_calls", "tool_results"}),
    "avoids_forbidden_text": frozenset({"output"}),
    "pii_leakage": frozenset({"output"}),
    "wrong_answer_cause": frozenset({"output", "tool_calls", "tool_arguments", "tool_results"}),
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


def reason(missing: list[str], setting: str | None = None) -> str:
    """``not applicable: the trace did not record the tool arguments`` (and, given the
    ``setting`` that records them, ``; turn on OTEL_...``)."""
    text = "not applicable: the trace did not record the " + " and ".join(
        m.replace("_", " ") for m in missing
    )
    return f"{text}; turn on {setting}" if setting else text


def not_recorded_score(name: str, trial: Trial, threshold: float) -> Score | None:
    """The not-applicable score of built-in scorer ``name`` for a trial missing content it
    needs; None when the scorer applies as usual."""
    needs = SCORER_NEEDS.get(name)
    if needs is None:
        return None
    missing = missing_for(trial, needs)
    if not missing:
        return None
    setting = trial.metadata.get(NOT_RECORDED_REASON)
    return Score(None, reason(missing, setting if isinstance(setting, str) else None), threshold)
