"""Apply scorers to a trial: the one place where judgments are derived from observations.

Each scorer is called as ``fn(case, trial)``. Whatever it returns is normalised by
:func:`agenteval.scoring.score.normalize_result`; if it raises, the trial gets a score with status
``error`` under that scorer's name and the other scorers still run. Scorers never call the
agent.

A trial whose source did not record content a built-in scorer needs (imported traces with
redacted prompts or tool arguments; see :mod:`agenteval.scoring.unrecorded`) gets that scorer's
``not_applicable`` score without calling it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.scoring.score import Score, ScorerFn, normalize_result, scorer_error
from agenteval.scoring.spec import BUILTIN_REF, Scorer, ScorerSpec, as_scorer
from agenteval.scoring.unrecorded import NOT_RECORDED, not_recorded_score
from agenteval.trials.trial import Trial


class Scorers:
    """An ordered, named set of scorers, ready to apply to trials.

    Plain functions are wrapped with :func:`~agenteval.scoring.spec.as_scorer` (name from
    the function, threshold 1.0, not a safety scorer).
    """

    def __init__(self, fns: Sequence[ScorerFn]) -> None:
        self.scorers: list[Scorer] = []
        self._items: list[tuple[str, ScorerFn, float]] = []
        self._builtin: set[str] = set()
        seen: set[str] = set()
        for fn in fns:
            s = as_scorer(fn)
            if s.name in seen:
                raise InputError(f"two scorers are named '{s.name}'; scorer names must be unique")
            seen.add(s.name)
            self.scorers.append(s)
            self._items.append((s.name, s.fn, s.threshold))  # the bare function: no wrapper call
            if s.ref is not None and s.ref.startswith(BUILTIN_REF):
                self._builtin.add(s.name)

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
        partial = bool(trial.metadata) and NOT_RECORDED in trial.metadata
        for name, fn, threshold in self._items:
            if partial and name in self._builtin:
                na = not_recorded_score(name, trial, threshold)
                if na is not None:
                    out[name] = na
                    continue
            try:
                raw = fn(case, trial)
            except Exception as e:
                out[name] = scorer_error(f"scorer raised {type(e).__name__}: {e}")
                continue
            # normalize_result's first case inlined (what every built-in scorer returns):
            # 16 calls a trial less, ~4 us (rescore bench, bench/run.py)
            if type(raw) is Score and (
                raw.threshold_given or threshold == raw.threshold or raw.value is None
            ):
                out[name] = raw
            else:
                out[name] = normalize_result(raw, threshold=threshold)
        return out
