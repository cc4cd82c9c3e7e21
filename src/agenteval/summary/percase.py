"""Per-case aggregates over repeats: what the gate, JUnit and pass^k work on.

With repeats, a case's value for a scorer is the mean over its applicable repeats, and it
*passed* only when every applicable repeat passed. A case failed (infrastructure-wise)
when any of its trials has a ``failure``; it was *answered* when every one of its trials
has an output (not None). Only counters are kept per case and scorer, so memory grows with
cases × scorers, never with trials.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agenteval.rundir import TrialRecord
from agenteval.scoring.score import Score, Status

ScoreStatus = Status


def score_status(s: Score) -> ScoreStatus:
    """The status of one score (``Score.status``): the one place the gate and the per-case
    aggregates read it."""
    return s.status


@dataclass(slots=True)
class CaseScore:
    """One scorer's results for one case, over its repeats."""

    applicable: int = 0
    passed: int = 0
    total: float = 0.0
    errors: int = 0
    not_applicable: int = 0
    inconclusive: int = 0
    binary: bool = True
    first_failure: str | None = None
    first_error: str | None = None

    @property
    def mean(self) -> float | None:
        """Mean value over applicable repeats; None when none applied."""
        return self.total / self.applicable if self.applicable else None

    @property
    def all_passed(self) -> bool | None:
        """True when every applicable repeat passed; None when none applied."""
        return None if not self.applicable else self.passed == self.applicable

    @property
    def failed(self) -> int:
        """Applicable repeats that did not pass."""
        return self.applicable - self.passed

    def add(self, s: Score) -> None:
        """Fold one repeat's score in (by :func:`score_status`)."""
        status = score_status(s)
        if status == "error":
            self.errors += 1
            if self.first_error is None:
                self.first_error = s.error
        elif status == "not_applicable":
            self.not_applicable += 1
        elif status == "inconclusive":
            self.inconclusive += 1
        else:
            value = s.value or 0.0
            self.applicable += 1
            self.total += value
            if value not in (0.0, 1.0):
                self.binary = False
            if status == "passed":
                self.passed += 1
            elif self.first_failure is None:
                self.first_failure = s.reason


@dataclass(slots=True)
class CaseAggregate:
    """Everything kept about one case across its trials."""

    trials: int = 0
    failed: int = 0
    answered: int = 0
    latency_total: float = 0.0
    latency_n: int = 0
    scores: dict[str, CaseScore] = field(default_factory=dict)

    @property
    def any_failed(self) -> bool:
        """True when at least one trial of the case has a failure (no answer)."""
        return self.failed > 0

    @property
    def all_answered(self) -> bool:
        """True when every trial of the case has an output (not None)."""
        return self.answered == self.trials

    @property
    def mean_latency(self) -> float | None:
        """Mean total latency over the trials where it is known."""
        return self.latency_total / self.latency_n if self.latency_n else None

    def add(self, rec: TrialRecord) -> None:
        """Fold one trial of this case into the aggregate."""
        self.trials += 1
        if rec.failure is not None:
            self.failed += 1
        if rec.output is not None:
            self.answered += 1
        if rec.latency.total_s is not None:
            self.latency_total += rec.latency.total_s
            self.latency_n += 1
        for name, s in rec.scores.items():
            cs = self.scores.get(name)
            if cs is None:
                cs = self.scores[name] = CaseScore()
            cs.add(s)


def aggregate_cases(records: Iterable[TrialRecord]) -> dict[str, CaseAggregate]:
    """Stream trials into per-case aggregates, keyed by case id (first-seen order)."""
    out: dict[str, CaseAggregate] = {}
    for rec in records:
        agg = out.get(rec.case_id)
        if agg is None:
            agg = out[rec.case_id] = CaseAggregate()
        agg.add(rec)
    return out


def in_dataset_order(
    per_case: Mapping[str, CaseAggregate], *orders: Iterable[str]
) -> dict[str, CaseAggregate]:
    """``per_case`` re-keyed in the order of the first of ``orders`` that names each case id
    (the dataset's ``cases.jsonl`` order), then any case no order names, in first-seen order.

    Trials are written in finish order, which varies from run to run; case lists built from
    the result (newly failing cases, safety regressions) then read the same every time.
    """
    out: dict[str, CaseAggregate] = {}
    for order in orders:
        for cid in order:
            agg = per_case.get(cid)
            if agg is not None and cid not in out:
                out[cid] = agg
    for cid, agg in per_case.items():
        out.setdefault(cid, agg)
    return out


def case_scores(per_case: Mapping[str, CaseAggregate], name: str) -> list[CaseScore]:
    """One scorer's per-case results (cases that carry it), for case-clustered intervals."""
    return [cs for agg in per_case.values() if (cs := agg.scores.get(name)) is not None]
