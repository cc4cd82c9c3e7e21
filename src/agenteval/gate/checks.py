"""The gate's checks on per-case aggregates: each scorer, failed trials, answered cases,
safety. Each returns its comparison with a raw one-sided p-value; :mod:`agenteval.gate.paired`
adjusts them together (Holm) and decides.

Every test asks one question, one-sided: *is the candidate worse?* A pass/fail scorer,
the failed-trial and the answered-case checks use the exact one-sided McNemar test on the
cases that changed (``worse`` = passed→failed, answered→not answered, not failed→failed);
a graded scorer uses the one-sided sign-flip permutation test on the per-case differences
candidate - baseline.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from agenteval.gate import evidence
from agenteval.gate.model import (
    CoverageComparison,
    FailureComparison,
    SafetyRegression,
    ScorerComparison,
)
from agenteval.summary import stats
from agenteval.summary.percase import CaseAggregate, CaseScore

PERMUTATION_SEED = 0
MAX_RESAMPLES = 200_000

Pair = tuple[str, CaseScore, CaseScore]


def resamples_for(level: float) -> int:
    """Monte Carlo draws for a permutation test at ``level``: enough that the smallest
    possible p-value, 1 / (draws + 1), is 40 times below the level (at least 4,000, at most
    MAX_RESAMPLES, also for a level so small that 40 / level overflows)."""
    if level * MAX_RESAMPLES <= 40:
        return MAX_RESAMPLES
    return max(stats.MONTE_CARLO_RESAMPLES, math.ceil(40 / level))


def compare_scorer(
    name: str, pairs: Sequence[Pair], allowed: float, level: float
) -> ScorerComparison:
    """Baseline vs candidate for one scorer on its paired cases (raw one-sided p-value).

    ``level`` is the strictest level the scorer may be tested at (alpha / family size): it
    sets the Monte Carlo draws and the power fields.
    """
    binary = all(b.binary and c.binary for _, b, c in pairs)
    # every case here applied in both runs: it passed when all its applicable repeats did
    b_ok = [b.passed == b.applicable for _, b, _ in pairs]
    c_ok = [c.passed == c.applicable for _, _, c in pairs]
    newly_failing = [p[0] for p, b, c in zip(pairs, b_ok, c_ok, strict=True) if b and not c]
    newly_passing = [p[0] for p, b, c in zip(pairs, b_ok, c_ok, strict=True) if c and not b]
    n = len(pairs)
    if binary:
        base, cand = sum(b_ok) / n, sum(c_ok) / n
        p = stats.mcnemar_one_sided(len(newly_failing), len(newly_passing))
        test = "mcnemar_one_sided"
        worse = newly_failing
        se = evidence.counts_se(len(newly_failing), len(newly_passing), n)
    else:
        b_means = [b.mean or 0.0 for _, b, _ in pairs]
        c_means = [c.mean or 0.0 for _, _, c in pairs]
        base, cand = sum(b_means) / n, sum(c_means) / n
        diffs = [c - b for b, c in zip(b_means, c_means, strict=True)]
        res = stats.paired_permutation(
            diffs, seed=PERMUTATION_SEED, alternative="less", resamples=resamples_for(level)
        )
        p, test = res.p_value, f"permutation_one_sided ({res.method})"
        worse = [pr[0] for pr, d in zip(pairs, diffs, strict=True) if d < -1e-9]
        se = evidence.diffs_se(diffs)
    comp = ScorerComparison(
        scorer=name,
        kind="pass/fail" if binary else "graded",
        paired=n,
        baseline=base,
        candidate=cand,
        delta=cand - base,
        test=test,
        p_value=p,
        allowed_drop=allowed,
        newly_failing=newly_failing,
        newly_passing=newly_passing,
        got_worse=worse,
        drop_se=se,
        drop_df=n - 1,
    )
    set_power(comp, level)
    return comp


def set_power(comp: ScorerComparison, level: float) -> None:
    """Fill underpowered, min_changed_cases and min_detectable_drop at ``level``.

    Both tests reach their smallest p-value, 2 ** -k, when all k changed cases got worse,
    so a drop can only be significant with at least d = min_discordant_to_reject(level)
    such cases; the scorer is underpowered when it has fewer paired cases than d. For a
    pass/fail scorer a drop is (worse - better) / paired, so the smallest one that can
    block is the smallest k / paired with k >= d and k / paired > the allowed drop.
    """
    d = stats.min_discordant_to_reject(level)
    comp.min_changed_cases = d
    comp.underpowered = comp.paired < d
    comp.min_detectable_drop = None
    if comp.underpowered or comp.kind != "pass/fail":
        return
    n = comp.paired
    k = max(d, math.floor(comp.allowed_drop * n + 1e-9) + 1)
    comp.min_detectable_drop = k / n if k <= n else None


def compare_failures(
    shared: Sequence[str], base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate]
) -> FailureComparison:
    """Cases with a failed trial: newly failed vs recovered (raw one-sided p-value)."""
    newly = [cid for cid in shared if cand[cid].any_failed and not base[cid].any_failed]
    recovered = [cid for cid in shared if base[cid].any_failed and not cand[cid].any_failed]
    return FailureComparison(
        paired=len(shared),
        baseline_failed=sum(base[cid].any_failed for cid in shared),
        candidate_failed=sum(cand[cid].any_failed for cid in shared),
        newly_failed=newly,
        recovered=recovered,
        p_value=stats.mcnemar_one_sided(len(newly), len(recovered)),
    )


def compare_coverage(
    shared: Sequence[str],
    missing: Sequence[str],
    base: Mapping[str, CaseAggregate],
    cand: Mapping[str, CaseAggregate],
) -> CoverageComparison:
    """Answered shared cases: newly unanswered vs newly answered (raw one-sided p-value).

    ``missing`` are baseline case ids with no trial in the candidate (recorded here; the
    caller decides whether they block).
    """
    lost = [cid for cid in shared if base[cid].all_answered and not cand[cid].all_answered]
    gained = [cid for cid in shared if cand[cid].all_answered and not base[cid].all_answered]
    cand_answered = sum(cand[cid].all_answered for cid in shared)
    return CoverageComparison(
        paired=len(shared),
        baseline_answered=sum(base[cid].all_answered for cid in shared),
        candidate_answered=cand_answered,
        newly_unanswered=lost,
        newly_answered=gained,
        p_value=stats.mcnemar_one_sided(len(lost), len(gained)),
        answered_none=bool(shared) and cand_answered == 0,
        missing=list(missing),
    )


def _baseline_state(agg: CaseAggregate | None, name: str) -> str:
    if agg is None:
        return "absent (no such case in the baseline)"
    cs = agg.scores.get(name)
    if cs is None:
        return "not scored"
    if cs.applicable:
        return "passed"
    what = "not answered" if not agg.all_answered else "not applicable"
    if cs.inconclusive:
        what = "inconclusive"
    if cs.errors:
        what = f"scorer error ({cs.first_error or ''})".replace(" ()", "")
    return what


def safety_regressions(
    base: Mapping[str, CaseAggregate],
    cand: Mapping[str, CaseAggregate],
    safety: Collection[str],
) -> list[SafetyRegression]:
    """Every candidate case failing a safety scorer that its baseline case did not fail.

    A case fails a scorer when at least one applicable repeat failed. A failure is new
    unless the baseline case also failed that scorer: passed, not applicable, not
    answered, inconclusive, errored, not scored or absent in the baseline do not excuse it.
    """
    out: list[SafetyRegression] = []
    for cid, agg in cand.items():
        for name, cs in agg.scores.items():
            if name not in safety or not cs.failed:
                continue
            b = base.get(cid)
            bs = b.scores.get(name) if b is not None else None
            if bs is not None and bs.failed:
                continue
            out.append(
                SafetyRegression(
                    scorer=name,
                    case_id=cid,
                    reason=cs.first_failure or "",
                    baseline=_baseline_state(b, name),
                )
            )
    return out


def unchecked_safety(
    shared: Sequence[str],
    base: Mapping[str, CaseAggregate],
    cand: Mapping[str, CaseAggregate],
    safety: Collection[str],
) -> tuple[dict[str, list[str]], list[str]]:
    """(per safety scorer, the unchecked cases; the scorers to block on).

    A shared case is *unchecked* for a safety scorer when the baseline has a result for it
    there (some repeat passed or failed), the candidate answered the case (unanswered cases
    are the coverage check's), and the candidate has none: the scorer errored or was
    inconclusive on every repeat, or was not run. A scorer blocks when every such case is
    unchecked: a candidate whose output makes the safety judge refuse, or that was run
    without the safety scorer, cannot pass by silencing the check. "Not applicable" in the
    candidate is a result (the scorer decided), not unchecked.
    """
    eligible = {
        name: [
            cid
            for cid in shared
            if (bs := base[cid].scores.get(name)) is not None
            and bs.applicable
            and cand[cid].all_answered
        ]
        for name in sorted(safety)
    }
    return silenced(eligible, cand)


def silenced(
    eligible: Mapping[str, Sequence[str]], cand: Mapping[str, CaseAggregate]
) -> tuple[dict[str, list[str]], list[str]]:
    """Per safety scorer, the ``eligible`` candidate cases where it gave no result (errored
    or inconclusive on every repeat, or not run; "not applicable" is a result), and the
    scorers that gave none on every eligible case (they block)."""
    out: dict[str, list[str]] = {}
    blocks: list[str] = []
    for name, cids in eligible.items():
        lost = [
            cid
            for cid in cids
            if (cs := cand[cid].scores.get(name)) is None
            or (not cs.applicable and not cs.not_applicable)
        ]
        if lost:
            out[name] = lost
        if cids and len(lost) == len(cids):
            blocks.append(name)
    return out, blocks
