"""Apply scorers to a trial: the one place where judgments are derived from observations.

Each scorer is called as ``fn(case, trial)``. Whatever it returns is normalised by
:func:`agenteval.score.normalize_result`; if it raises, the trial gets a scorer-error score
under that scorer's name and the other scorers still run. Scorers never call the agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.case import Case
from agenteval.errors import InputError
from agenteval.score import Score, ScorerFn, normalize_result, scorer_error, scorer_name
from agenteval.score import scorer_threshold as _threshold
from agenteval.trial import Trial


class Scorers:
    """An ordered, named set of scorers, ready to apply to trials."""

    def __init__(self, fns: Sequence[ScorerFn]) -> None:
        self._items: list[tuple[str, ScorerFn, float]] = []
        seen: set[str] = set()
        for fn in fns:
            name = scorer_name(fn)
            if name in seen:
                raise InputError(f"two scorers are named '{name}'; scorer names must be unique")
            seen.add(name)
            self._items.append((name, fn, _threshold(fn)))

    @property
    def names(self) -> list[str]:
        return [n for n, _, _ in self._items]

    def __len__(self) -> int:
        return len(self._items)

    def apply(self, case: Case, trial: Trial) -> dict[str, Score]:
        """Score one trial with every scorer; a scorer's crash is recorded, not raised."""
        out: dict[str, Score] = {}
        for name, fn, threshold in self._items:
            try:
                raw = fn(case, trial)
            except Exception as e:
                out[name] = scorer_error(f"scorer raised {type(e).__name__}: {e}")
                continue
            out[name] = normalize_result(raw, threshold=threshold)
        return out
