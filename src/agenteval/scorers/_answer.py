"""When a trial has no answer to judge.

A trial whose agent never answered (``output`` is None: a timeout, an HTTP error, a crash)
made no choice that can be judged. Scorers that judge the answer or the agent's choices
return *not applicable* for it, naming the failure cause, instead of a misleading 0.
Scorers about the calls that were made still judge those calls.
"""

from __future__ import annotations

import functools

from agenteval.scoring.score import Score, not_applicable
from agenteval.trials.trial import Trial


def unanswered(trial: Trial) -> Score | None:
    """Not applicable, naming the failure cause, when the agent never answered; else None.

    The reason reads ``agent never answered (failure: timeout)``, or
    ``agent never answered (no failure recorded)`` when the trial carries no cause.
    """
    if trial.output is not None:
        return None
    return _never_answered(trial.failure.cause if trial.failure is not None else None)


@functools.lru_cache(maxsize=64)
def _never_answered(cause: str | None) -> Score:
    # Shared between trials with the same cause (a Score is treated as immutable).
    detail = f"failure: {cause}" if cause else "no failure recorded"
    return not_applicable(f"agent never answered ({detail})")


def call_ref(index: int, name: str) -> str:
    """How reasons name a call: ``#2 search`` (calls are numbered from 1)."""
    return f"#{index + 1} {name}"
