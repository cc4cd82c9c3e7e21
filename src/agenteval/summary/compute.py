"""Compute a run's :class:`Summary`: from a run directory, or from records streamed in.

The definitions (correct answer, how score statuses count, agent and judge cost) and the memory
behaviour are those of :mod:`agenteval.summary.accumulator`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from agenteval.cases.case import Case
from agenteval.llm.pricing import PriceTable
from agenteval.rundir import RunHeader, TrialRecord, iter_trials, read_header
from agenteval.summary.accumulator import Accumulator, correctness_scorer
from agenteval.summary.model import Summary
from agenteval.summary.sources import case_ids, case_tags, price_table_of

__all__ = [
    "correctness_scorer",
    "summarize",
    "summarize_records",
    "write_json",
]


def summarize_records(
    header: RunHeader,
    records: Iterable[TrialRecord],
    cases: Mapping[str, Case] | None,
    *,
    prices: PriceTable | None = None,
) -> Summary:
    """Summarise trials streamed from ``records``.

    ``cases`` (id → Case) provides tags; without it there is no per-tag breakdown.
    ``prices`` defaults to the run's recorded table over the built-in defaults.
    """
    tags = {cid: c.tags for cid, c in cases.items()} if cases else None
    acc = Accumulator(
        header,
        tags,
        prices or price_table_of(header),
        case_order=(lambda: list(cases)) if cases else None,
    )
    for rec in records:
        acc.add(rec)
    return acc.finish()


def summarize(run_dir: str | Path, *, prices: PriceTable | None = None) -> Summary:
    """Read a run directory and summarise it (same result as :func:`summarize_records`).

    Memory stays flat in the number of trials: from the cases snapshot only the tags are
    kept, and per-case aggregates (pass^k, flaky cases) are built in a second pass over the
    trials only when the run has repeats (some ``repeat`` > 0).
    """
    header = read_header(run_dir)
    acc = Accumulator(
        header,
        case_tags(run_dir),
        prices or price_table_of(header),
        per_case=False,
        case_order=lambda: case_ids(run_dir),
    )
    for rec in iter_trials(run_dir):
        acc.add(rec)
    return acc.finish_streamed(run_dir)


def write_json(
    run_dir: str | Path, out_path: str | Path, *, prices: PriceTable | None = None
) -> Summary:
    """Write the run's Summary as indented JSON to ``out_path``; returns it."""
    summary = summarize(run_dir, prices=prices)
    Path(out_path).write_text(json.dumps(summary.model_dump(mode="json"), indent=2) + "\n")
    return summary
