"""Score: one scorer's judgment of one trial (SPEC §2.3).

Every score carries an explicit :attr:`Score.status`, one of :data:`STATUSES`:

- ``passed`` / ``failed``: the scorer applied; ``value`` in [0, 1] compared with
  ``threshold`` (``value >= threshold`` passes);
- ``not_applicable``: nothing to check (``value`` None), e.g. a case without a canary;
- ``inconclusive``: the scorer should have decided but could not (``value`` None), e.g. a
  judge error, an unparseable verdict or a tie between judge samples;
- ``error``: the scorer raised or returned something unusable (``error`` says what). It
  counts as a scorer error, never as a failure of the agent.

Status is data: it is given (or derived from value, threshold and error) when the score is
created and stored with it; nothing reads the reason text to decide it. The reason always
says why (for a number, enough to check the arithmetic).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from agenteval.trials.trial import Usage

BINARY_THRESHOLD = 1.0
GRADED_THRESHOLD = 0.5

Status = Literal["passed", "failed", "not_applicable", "inconclusive", "error"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "not_applicable", "inconclusive", "error")
"""Every score status, in report order."""
_VALUED = frozenset(("passed", "failed"))
_UNVALUED = frozenset(("not_applicable", "inconclusive"))


@dataclass(slots=True)
class Score:
    """A value in [0, 1] (or None) with its reason and its :attr:`status`.

    ``status`` None (the default) is derived when the score is created: ``error`` set →
    ``error``; value None → ``not_applicable``; else ``passed`` when ``value >=
    threshold``, ``failed`` otherwise. An explicit status must agree with the value:
    ``passed``/``failed`` need a value on the right side of the threshold,
    ``not_applicable``/``inconclusive`` need value None and no error; ``error`` sets
    ``error`` to the reason when it was not given. A disagreement, or a threshold outside
    [0, 1] (NaN included), raises ValueError.

    Treat a Score as immutable: readers share equal Score objects between trials. (It is
    not a frozen dataclass because a frozen one costs several times more to create, and
    rescoring creates a dozen per trial.)
    """

    value: float | None
    reason: str
    threshold: float = None  # type: ignore[assignment]  # None: BINARY_THRESHOLD, not given
    error: str | None = None
    usage: list[Usage] = field(default_factory=list)
    status: Status = None  # type: ignore[assignment]  # derived in __post_init__
    threshold_given: bool = field(default=True, init=False, repr=False, compare=False)
    """False when the score was created without a threshold: a ``@scorer``'s own threshold
    then applies to it (:func:`normalize_result`)."""

    def __post_init__(self) -> None:
        v = self.value
        status = self.status
        if self.threshold is None:
            self.threshold = BINARY_THRESHOLD
            self.threshold_given = False
        if not 0.0 <= self.threshold <= 1.0:  # NaN fails the comparison too
            raise ValueError(f"score threshold must be within [0, 1], got {self.threshold!r}")
        if status is None and self.error is None:  # the common case, decided cheaply
            if v is None:
                self.status = "not_applicable"
                return
            if type(v) is float:
                if not 0.0 <= v <= 1.0:  # NaN fails the comparison too
                    raise ValueError(f"score value must be within [0, 1], got {v!r}")
                self.status = "passed" if v >= self.threshold else "failed"
                return
        if v is not None and type(v) is not float:
            v = self._number(v)
        elif v is not None and not 0.0 <= v <= 1.0:  # NaN fails the comparison too
            raise ValueError(f"score value must be within [0, 1], got {v!r}")
        if status is None:
            if self.error is not None:
                self.status = "error"
            elif v is None:
                self.status = "not_applicable"
            else:
                self.status = "passed" if v >= self.threshold else "failed"
            return
        if status in _VALUED:
            if v is None:
                raise ValueError(f"a {status} score needs a value")
            if (v >= self.threshold) != (status == "passed") or self.error is not None:
                raise ValueError(
                    f"status {status!r} contradicts value {v!r} with threshold"
                    f" {self.threshold!r}" + (" and an error" if self.error is not None else "")
                )
        elif status in _UNVALUED:
            if v is not None or self.error is not None:
                raise ValueError(f"a {status} score has value None and no error")
        elif status == "error":
            if self.error is None:
                self.error = self.reason
        else:
            raise ValueError(f"unknown score status {status!r}; use one of {', '.join(STATUSES)}")

    def _number(self, v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise TypeError(f"score value must be a number or None, got {type(v).__name__}")
        if math.isnan(v) or not 0.0 <= v <= 1.0:
            raise ValueError(f"score value must be within [0, 1], got {v!r}")
        self.value = float(v)
        return self.value

    @property
    def applicable(self) -> bool:
        """True when the scorer gave a value (status ``passed`` or ``failed``)."""
        return self.status in _VALUED

    @property
    def passed(self) -> bool | None:
        """True for ``passed``, False for ``failed``, None for every other status."""
        s = self.status
        return True if s == "passed" else False if s == "failed" else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in ``trials.jsonl`` (format 2: ``status`` included)."""
        d: dict[str, Any] = {
            "status": self.status,
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
        """Read the JSON form back (``passed`` is derived, so it is ignored).

        A score without ``status`` (written by agenteval 0.1, format 1) gets the status
        0.1 meant, see :func:`legacy_status`.
        """
        if not isinstance(d, dict):
            raise ValueError(f"a score must be a JSON object, got {type(d).__name__}")
        status = d.get("status")
        if status is not None and not isinstance(status, str):
            raise ValueError(f"score status must be a string, got {type(status).__name__}")
        usage = [Usage.model_validate(u) for u in d.get("usage") or []]
        value = d.get("value")
        reason = str(d.get("reason", ""))
        threshold = float(d.get("threshold", BINARY_THRESHOLD))
        error = d.get("error")
        if status is None:
            status = legacy_status(value, reason, error)
        return cls(value, reason, threshold, error, usage, status)  # type: ignore[arg-type]


def legacy_status(value: Any, reason: str, error: Any) -> Status | None:
    """The status of a score stored without one (format 1), exactly as 0.1 counted it.

    ``error`` set → ``error``; value None and reason starting ``inconclusive`` (any case)
    → ``inconclusive``; value None → ``not_applicable``; else None (derived from value and
    threshold: ``passed``/``failed``). Used only when reading old data.
    """
    if error is not None:
        return "error"
    if value is None:
        return "inconclusive" if reason.lower().startswith("inconclusive") else "not_applicable"
    return None


def not_applicable(reason: str) -> Score:
    """A score that does not apply (nothing to check), with the reason."""
    return Score(None, reason, status="not_applicable")


def inconclusive(reason: str, *, threshold: float = BINARY_THRESHOLD) -> Score:
    """A score the scorer should have decided but could not (judge error, tie...)."""
    return Score(None, reason, threshold, status="inconclusive")


def scorer_error(reason: str) -> Score:
    """A scorer that raised or returned something unusable."""
    return Score(None, reason, error=reason, status="error")


ScorerFn = Callable[..., Any]
"""A scorer: ``fn(case, trial)`` returning Score, number, bool, (value, reason) or None."""


def normalize_result(raw: Any, *, threshold: float = BINARY_THRESHOLD) -> Score:
    """Turn whatever a custom scorer returned into a Score (SPEC §4, custom scorers).

    - ``Score`` → itself (its status as given, e.g. ``inconclusive(reason)``); one created
      without a threshold takes ``threshold`` (the scorer's), its pass/fail status derived
      again from it;
    - ``None`` → not applicable;
    - ``bool`` → 1.0 / 0.0 (threshold 1.0);
    - a number in [0, 1] → that value;
    - ``(value, reason)`` → value as above with that reason (value None = not applicable).

    Anything else, NaN, or a number outside [0, 1] gives a scorer error whose reason says
    what was returned.
    """
    if isinstance(raw, Score):
        if raw.threshold_given or threshold == raw.threshold or raw.value is None:
            return raw
        status = None if raw.status in ("passed", "failed") else raw.status
        return Score(raw.value, raw.reason, threshold, raw.error, raw.usage, status)  # type: ignore[arg-type]
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


__all__ = [
    "BINARY_THRESHOLD",
    "GRADED_THRESHOLD",
    "STATUSES",
    "Score",
    "ScorerFn",
    "Status",
    "inconclusive",
    "legacy_status",
    "normalize_result",
    "not_applicable",
    "scorer_error",
]
