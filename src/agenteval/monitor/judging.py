"""The LLM judge in the monitor: a deterministic sample, a budget per hour, the cache.

With ``--rubric`` (the judge's own options, :mod:`agenteval.cli.judge_args`), a trial is
judged when

- it is in the **sample**: the SHA-256 of its conversation id (with ``--group
  conversation``) or else its trace id, read as a number in [0, 1), is below
  ``--judge-sample RATE``. The same trace is in or out whatever the order, the replica
  or the restart: a replay judges the same traces (and the judge's cache answers them
  without a second call);
- and the **budget** is not spent: the judge's cost over the last hour (the monitor's
  clock, a rolling hour) is below ``--judge-max-usd-per-hour``. The cost is the judge's
  token usage priced by the price table (cache hits cost nothing). Calls already
  started when the budget is reached still finish: the hour may go over by the cost of
  at most ``--judge-concurrency`` trials' calls.

A trial not judged is scored by the deterministic scorers as always, and each rubric's
score is recorded **not applicable** with a reason that says why: ``not judged: outside
the 10% sample (--judge-sample 0.1)`` or ``not judged: the judge budget of $0.50 per hour
is spent ($0.5012 in the last hour)``. Budget skips are counted
(``judge_budget_skipped_total``), as are the judge's calls, cache hits and spend.

The judging runs as tasks on the monitor's event loop, beside the HTTP server: a request
is acknowledged once it is durable whatever the judge is doing. A trace waiting for its
judge holds its spans in memory and its write-ahead log segments, so a slow judge pushes
back (429 past ``--max-pending-spans``) rather than growing.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from agenteval.cases.case import Case
from agenteval.judge import Judge
from agenteval.llm.pricing import PriceTable
from agenteval.scoring.score import Score
from agenteval.scoring.spec import ScorerSpec
from agenteval.trials.trial import Trial

__all__ = ["JudgeStage", "sample_point"]

HOUR_S = 3600.0
_NANO = 1_000_000_000


def sample_point(key: str) -> float:
    """``key`` (a trace or conversation id) as a number in [0, 1): the SHA-256's first
    8 bytes over 2^64."""
    digest = hashlib.sha256(key.encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:8]) / 2.0**64


class JudgeStage:
    """Judges the trials the sample and the budget let through (module docstring)."""

    def __init__(
        self,
        judge: Judge,
        *,
        sample: float = 1.0,
        max_usd_per_hour: float | None = None,
        prices: PriceTable | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0.0 < sample <= 1.0:
            raise ValueError(f"sample must be within (0, 1], got {sample}")
        self.judge = judge
        self.sample = sample
        self.max_usd_per_hour = max_usd_per_hour
        self.prices = prices or PriceTable.default()
        self._clock = clock
        # whole nano-dollars: a float sum of ten $0.01 is below $0.10 and let one more in
        self._spent: deque[tuple[float, int]] = deque()
        self._hour_nusd = 0
        self._sem = asyncio.Semaphore(judge.config.concurrency)
        self._started = False
        self._start_lock = asyncio.Lock()
        self.spend_usd = 0.0
        """What the judge cost since the process started (USD; 0 for unpriced models)."""
        self.priced = self.prices.lookup(judge.config.model) is not None
        self.judged = 0
        self.sampled_out = 0
        self.budget_skipped = 0

    @property
    def names(self) -> list[str]:
        return self.judge.names

    @property
    def specs(self) -> list[ScorerSpec]:
        return self.judge.specs

    def describe(self) -> dict[str, Any]:
        """The judge's settings for each window's ``run.json`` (no secrets)."""
        return {
            **self.judge.describe(),
            "sample": self.sample,
            "max_usd_per_hour": self.max_usd_per_hour,
        }

    def sampled(self, trial: Trial) -> bool:
        """Whether the trial is in the sample (module docstring)."""
        meta = trial.metadata
        conv = meta.get("conversation")
        if isinstance(conv, dict):  # the record export-otel carries: its id, not its turns
            conv = conv.get("id")
        key = conv if isinstance(conv, str) and conv else meta.get("trace_id") or trial.case_id
        return self.sample >= 1.0 or sample_point(str(key)) < self.sample

    def hour_usd(self) -> float:
        """The judge's cost over the last hour."""
        now = self._clock()
        while self._spent and now - self._spent[0][0] >= HOUR_S:
            self._hour_nusd -= self._spent.popleft()[1]
        return self._hour_nusd / _NANO

    def _not_judged(self, why: str) -> dict[str, Score]:
        return {
            r.score_name: Score(None, f"not judged: {why}", r.pass_threshold)
            for r in self.judge.config.rubrics
        }

    def outside_sample(self, trial: Trial) -> dict[str, Score] | None:
        """The not-judged scores of a trial outside the sample (counted); None when it is
        in the sample."""
        if self.sampled(trial):
            return None
        self.sampled_out += 1
        pct = f"{self.sample * 100:g}%"
        return self._not_judged(f"outside the {pct} sample (--judge-sample {self.sample:g})")

    async def score(self, case: Case, trial: Trial) -> dict[str, Score]:
        """Each rubric's score for the trial: judged, or not applicable saying why."""
        left_out = self.outside_sample(trial)
        if left_out is not None:
            return left_out
        async with self._start_lock:  # one HTTP session, however many trials ask at once
            if not self._started:
                await self.judge.start()
                self._started = True
        async with self._sem:
            budget = self.max_usd_per_hour
            if budget is not None:
                spent = self.hour_usd()
                if self._hour_nusd >= max(1, round(budget * _NANO)):
                    self.budget_skipped += 1
                    return self._not_judged(
                        f"the judge budget of ${budget:g} per hour is spent"
                        f" (${spent:.4f} in the last hour; --judge-max-usd-per-hour)"
                    )
            scores = await self.judge.score(case, trial)
        self.judged += 1
        model = self.judge.config.model
        usages = [
            u if u.model else u.model_copy(update={"model": model})
            for s in scores.values()
            for u in s.usage
        ]
        cost = self.prices.cost(usages) or 0.0
        if cost:
            self.spend_usd += cost
            nusd = round(cost * _NANO)
            self._hour_nusd += nusd
            self._spent.append((self._clock(), nusd))
        return scores

    def counters(self) -> dict[str, tuple[str, Callable[[], float]]]:
        """The judge's counters for ``/metrics`` (:mod:`agenteval.monitor.metrics`)."""
        stats = self.judge.stats
        return {
            "judge_calls_total": ("Requests to the judge.", lambda: stats.calls),
            "judge_cache_hits_total": ("Judge replies from its cache.", lambda: stats.cache_hits),
            "judge_spend_usd_total": ("What the judge cost (USD).", lambda: self.spend_usd),
            "judge_budget_skipped_total": (
                "Trials not judged: the hour's budget was spent.",
                lambda: self.budget_skipped,
            ),
            "judge_sampled_out_total": (
                "Trials not judged: outside the sample.",
                lambda: self.sampled_out,
            ),
        }

    async def close(self) -> None:
        if self._started:
            await self.judge.close()
            self._started = False
