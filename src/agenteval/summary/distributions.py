"""Two summary sections computed from collected values: latency distributions and the
repeat statistics (pass@1, pass@k, pass^k, flaky cases)."""

from __future__ import annotations

from collections.abc import Mapping

from agenteval.summary import stats
from agenteval.summary.model import (
    Distribution,
    FlakyCase,
    HistogramBin,
    RepeatScorer,
    RepeatSummary,
)
from agenteval.summary.percase import CaseAggregate

HISTOGRAM_BINS = 20
MAX_FLAKY = 100


def distribution(values: list[float]) -> Distribution:
    """n, mean, p50, p95, max and a histogram of ``values`` (sorted in place)."""
    if not values:
        return Distribution()
    values.sort()
    top = values[-1]
    width = top / HISTOGRAM_BINS
    if not width > 0:  # no positive value, or one so small (5e-324) that a bin underflows
        width = 1.0
    counts = [0] * HISTOGRAM_BINS
    for v in values:
        counts[min(int(v / width), HISTOGRAM_BINS - 1)] += 1
    return Distribution(
        n=len(values),
        mean=sum(values) / len(values),
        p50=stats.percentile(values, 50),
        p95=stats.percentile(values, 95),
        max=top,
        histogram=[
            HistogramBin(low=i * width, high=(i + 1) * width, count=n) for i, n in enumerate(counts)
        ],
    )


def repeat_summary(per_case: Mapping[str, CaseAggregate]) -> RepeatSummary | None:
    """pass@1, pass@k, pass^k per scorer and the flaky cases; None without repeats."""
    k = max((a.trials for a in per_case.values()), default=0)
    if k < 2:
        return None
    rep = RepeatSummary(k=k)
    sums: dict[str, list[float]] = {}
    for case_id, agg in per_case.items():
        flaky: list[str] = []
        for name, cs in agg.scores.items():
            n, c = cs.applicable, cs.passed
            if n >= 2 and 0 < c < n:
                flaky.append(name)
            if n < 1:
                continue
            kk = min(k, n)
            acc = sums.setdefault(name, [0.0, 0.0, 0.0, 0.0])
            acc[0] += 1
            acc[1] += c / n
            acc[2] += stats.pass_at_k(n, c, kk)
            acc[3] += stats.pass_hat_k(n, c, kk)
        if flaky:
            rep.flaky_count += 1
            if len(rep.flaky) < MAX_FLAKY:
                rep.flaky.append(FlakyCase(case_id=case_id, scorers=sorted(flaky)))
    for name, (cnt, p1, pk, phk) in sums.items():
        rep.scorers[name] = RepeatScorer(
            cases=int(cnt), pass_at_1=p1 / cnt, pass_at_k=pk / cnt, pass_hat_k=phk / cnt
        )
    return rep
