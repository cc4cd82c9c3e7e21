"""Score: one scorer's judgment of one trial (SPEC §2.3).

A score is a value in [0, 1], or ``None`` meaning *not applicable*; the reason always says
why (for a number, enough to check the arithmetic). A scorer that crashed or returned
something unusable gives a score with ``error`` set: it counts as a scorer error, never as
a failure of the agent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agenteval.trial import Usage

BINARY_THRESHOLD = 1.0
GRADED_THRESHOLD = 0.5


@dataclass(slots=True)
class Score:
    """A value in [0, 1] or None (not applicable / inconclusive), with its reason.

    Treat a Score as immutable: readers share equal Score objects between trials. (It is
    not a frozen dataclass because a frozen one costs several times more to create, and
    rescoring creates a dozen per trial.)
    """

    value: float | None
    reason: str
    threshold: float = BINARY_THRESHOLD
    error: str | None = None
    usage: list[Usage] = field(default_factory=list)

    def __post_init__(self) -> None:
        v = self.value
        if v is None:
            return
        if type(v) is float:  # the common case, checked cheaply; NaN fails the comparison
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"score value must be within [0, 1], got {v!r}")
            return
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise TypeError(f"score value must be a number or None, got {type(v).__name__}")
        if math.isnan(v) or not 0.0 <= v <= 1.0:
            raise ValueError(f"score value must be within [0, 1], got {v!r}")
        self.value = float(v)

    @property
    def applicable(self) -> bool:
        """False when the scorer did not apply (or could not decide, or errored)."""
        return self.value is not None

    @property
    def passed(self) -> bool | None:
        """``value >= threshold``; None when not applicable."""
        return None if self.value is None else self.value >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in ``trials.jsonl``."""
        d: dict[str, Any] = {
            "value": self.value,
            "reason": self.reason,
            "passed": self.passed,
            "threshold": self.threshold,
        }
        if self.error is not None:
            d["error"] = self.error
        if self.usage:
            d["usage"] = [u.model_dump() for u in self.usage]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Score:
        """Read the JSON form back (``passed`` is derived, so it is ignored)."""
        usage = [Usage.model_validate(u) for u in d.get("usage") or []]
        return cls(
            value=d.get("value"),
            reason=str(d.get("reason", "")),
            threshold=float(d.get("threshold", BINARY_THRESHOLD)),
            error=d.get("error"),
            usage=usage,
        )


def not_applicable(reason: str) -> Score:
    """A score that does not apply, with the reason."""
    return Score(None, reason)


def scorer_error(reason: str) -> Score:
    """A scorer that raised or returned something unusable."""
    return Score(None, reason, error=reason)


ScorerFn = Callable[..., Any]
"""A scorer: ``fn(case, trial)`` returning Score, number, bool, (value, reason) or None."""


def scorer(
    name: str | None = None, *, threshold: float = BINARY_THRESHOLD
) -> Callable[[ScorerFn], ScorerFn]:
    """Mark a function as a scorer with a name and a pass threshold.

    This only sets attributes on the function; nothing is registered globally. Pass the
    function to ``evaluate(..., scorers=[fn])`` or ``--scorer module:fn``.
    """

    def mark(fn: ScorerFn) -> ScorerFn:
        fn.__agenteval_name__ = name or fn.__name__  # type: ignore[attr-defined]
        fn.__agenteval_threshold__ = threshold  # type: ignore[attr-defined]
        return fn

    return mark


def scorer_name(fn: ScorerFn) -> str:
    """The name a scorer's results are stored under."""
    return str(getattr(fn, "__agenteval_name__", None) or getattr(fn, "__name__", repr(fn)))


def scorer_threshold(fn: ScorerFn) -> float:
    """The pass threshold declared with :func:`scorer` (default 1.0)."""
    return float(getattr(fn, "__agenteval_threshold__", BINARY_THRESHOLD))


def normalize_result(raw: Any, *, threshold: float = BINARY_THRESHOLD) -> Score:
    """Turn whatever a custom scorer returned into a Score (SPEC §4, custom scorers).

    - ``Score`` → itself;
    - ``None`` → not applicable;
    - ``bool`` → 1.0 / 0.0 (threshold 1.0);
    - a number in [0, 1] → that value;
    - ``(value, reason)`` → value as above with that reason (value None = not applicable).

    Anything else, NaN, or a number outside [0, 1] gives a scorer error whose reason says
    what was returned.
    """
    if isinstance(raw, Score):
        return raw
    reason = ""
    value = raw
    if isinstance(raw, tuple):
        if len(raw) != 2:
            return scorer_error(f"returned a tuple of {len(raw)} items; expected (value, reason)")
        value, reason_raw = raw
        reason = "" if reason_raw is None else str(reason_raw)
    if value is None:
        return not_applicable(reason or "scorer returned None (not applicable)")
    if isinstance(value, bool):
        return Score(1.0 if value else 0.0, reason or ("passed" if value else "failed"), threshold)
    if isinstance(value, int | float):
        f = float(value)
        if math.isnan(f) or not 0.0 <= f <= 1.0:
            return scorer_error(f"returned {value!r}; a score must be within [0, 1]")
        return Score(f, reason or f"score {f:g}", threshold)
    return scorer_error(
        f"returned {type(raw).__name__}; expected a number, bool, (value, reason), Score or None"
    )
