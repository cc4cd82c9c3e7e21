"""Apply scorers to a trial: the one place where judgments are derived from observations.

Each scorer is called as ``fn(case, trial)``. Whatever it returns is normalised by
:func:`agenteval.score.normalize_result`; if it raises, the trial gets a score with status
``error`` under that scorer's name and the other scorers still run. Scorers never call the
agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenteval.case import Case
from agenteval.errors import InputError
from agenteval.score import Score, ScorerFn, normalize_result, scorer_error
from agenteval.scorer_spec import Scorer, ScorerSpec, as_scorer
from agenteval.trial import Trial


class Scorers:
    """An ordered, named set of scorers, ready to apply to trials.

    Plain functions are wrapped with :func:`~agenteval.scorer_spec.as_scorer` (name from
    the function, threshold 1.0, not a safety scorer).
    """

    def __init__(self, fns: Sequence[ScorerFn]) -> None:
        self.scorers: list[Scorer] = []
        self._items: list[tuple[str, ScorerFn, float]] = []
        seen: set[str] = set()
        for fn in fns:
            s = as_scorer(fn)
            if s.name in seen:
                raise InputError(f"two scorers are named '{s.name}'; scorer names must be unique")
            seen.add(s.name)
            self.scorers.append(s)
            self._items.append((s.name, s.fn, s.threshold))  # the bare function: no wrapper call

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its scorers (each a recipe, see ``Scorer.__reduce__``)."""
        return (Scorers, (self.scorers,))

    @property
    def names(self) -> list[str]:
        return [n for n, _, _ in self._items]

    @property
    def specs(self) -> list[ScorerSpec]:
        """Every scorer's spec, in order (what ``run.json`` records)."""
        return [s.spec for s in self.scorers]

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
