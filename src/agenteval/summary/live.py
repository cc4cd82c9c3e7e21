"""A summary kept up to date while a run writes its trials."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agenteval.llm.pricing import PriceTable
from agenteval.rundir import RunHeader
from agenteval.scoring.score import Score
from agenteval.summary.accumulator import Accumulator
from agenteval.summary.contribution import Contribution
from agenteval.summary.model import Summary
from agenteval.summary.sources import SnapshotIndex, case_ids, case_tags, price_table_of
from agenteval.trials.trial import Trial


class LiveSummary:
    """A run's summary fed trial by trial as the run appends them, so that a fresh run
    need not read its trials back at the end. Gives the same Summary as :func:`summarize`
    on the finished directory (with repeats, per-case aggregates come from one pass over
    the file in :meth:`finish`, as there).
    """

    def __init__(
        self, run_dir: str | Path, header: RunHeader, snapshot: SnapshotIndex | None = None
    ) -> None:
        """``snapshot``: the run's cases snapshot already indexed (its file not read again)."""
        self.run_dir = Path(run_dir)
        tags = snapshot.tags if snapshot is not None else None
        if tags is None:
            tags = case_tags(run_dir)
        ids = snapshot.ids if snapshot is not None else None
        self._acc = Accumulator(
            header,
            tags,
            price_table_of(header),
            per_case=False,
            case_order=(lambda: case_ids(self.run_dir)) if ids is None else (lambda: ids),
        )

    def add(self, trial: Trial, scores: Mapping[str, Score]) -> None:
        """Count one trial as it is written."""
        self._acc.add(trial, scores)

    def contribution_args(self) -> tuple[PriceTable, str] | None:
        """(prices, correct_by) for :func:`~agenteval.summary.contribution.contribution`
        computed elsewhere (a worker process), or None when this summary cannot take
        contributions: the run names no correctness scorer, so the first trial's scores
        would pick it."""
        acc = self._acc
        return None if acc.correct_by is None else (acc.prices, acc.correct_by)

    def add_contribution(self, part: Contribution) -> None:
        """Count one trial from its :data:`~agenteval.summary.contribution.Contribution`."""
        self._acc.add_contribution(part)

    def finish(self) -> Summary:
        """The summary of every trial added (reads the run back only when it has repeats)."""
        return self._acc.finish_streamed(self.run_dir)
