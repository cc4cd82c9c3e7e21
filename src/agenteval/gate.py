"""The release gate: compare a candidate run with a baseline, case by case (SPEC §8).

Cases are paired by id. With repeats, a case's value for a scorer is the mean over its
applicable repeats, and it *passed* only when every applicable repeat passed. A scorer is
compared on the cases where it applied in both runs.

The candidate is **blocked** when any of these holds:

1. **Safety**: a case fails ``avoids_forbidden_text`` or ``pii_leakage`` in the candidate
   that passed in the baseline — whatever else improved.
2. **Significant regression**: for a scorer, the drop (baseline minus candidate, in score
   units: pass rate for pass/fail scorers, mean for graded ones) is larger than its allowed
   drop (``max_drop``, default 0) *and* a two-sided paired test gives p < ``alpha``:
   exact McNemar for pass/fail scorers (every value 0 or 1), the sign-flip permutation
   test on per-case mean differences for graded scorers.
3. **More failed trials**: the share of cases with a failed trial rises and McNemar on
   failed/not-failed gives p < ``alpha``.

Runs over different datasets (``dataset.sha256`` in run.json, or the case ids when a hash
is missing) are refused with an InputError unless ``allow_dataset_change``; then only the
shared case ids are compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agenteval.errors import EXIT_BLOCKED, EXIT_OK, InputError
from agenteval.report import stats
from agenteval.report.percase import CaseAggregate, CaseScore, aggregate_cases
from agenteval.rundir import RunHeader, iter_trials, read_header
from agenteval.scorers import SAFETY_SCORERS  # any new failure of these blocks

PERMUTATION_SEED = 0


class ScorerComparison(BaseModel):
    """One scorer, baseline vs candidate, on the cases where it applied in both."""

    scorer: str
    kind: Literal["pass/fail", "graded"]
    paired: int = Field(description="Cases where the scorer applied in both runs.")
    baseline: float | None = Field(description="Pass rate (pass/fail) or mean (graded).")
    candidate: float | None
    delta: float = Field(description="candidate - baseline (negative = worse).")
    test: str
    p_value: float
    allowed_drop: float
    significant: bool
    blocks: bool = Field(description="A significant drop beyond the allowed one.")
    safety_blocks: bool = Field(False, description="A safety scorer with a new failure.")
    newly_failing: list[str] = Field(default_factory=list)
    newly_passing: list[str] = Field(default_factory=list)

    @property
    def direction(self) -> str:
        """'improved', 'regressed' or 'unchanged' (by the sign of delta alone)."""
        if self.delta > 1e-12:
            return "improved"
        if self.delta < -1e-12:
            return "regressed"
        return "unchanged"


class SafetyRegression(BaseModel):
    """A case that passed a safety scorer in the baseline and fails it in the candidate."""

    scorer: str
    case_id: str
    reason: str


class FailureComparison(BaseModel):
    """Cases with a failed trial (no answer), baseline vs candidate."""

    paired: int
    baseline_failed: int
    candidate_failed: int
    newly_failed: list[str] = Field(default_factory=list)
    recovered: list[str] = Field(default_factory=list)
    test: str = "mcnemar_exact"
    p_value: float = 1.0
    blocks: bool = False


class GateResult(BaseModel):
    """What the gate decided and why."""

    blocked: bool
    reasons: list[str] = Field(default_factory=list, description="Why it blocked (or passed).")
    alpha: float
    baseline_run: str
    candidate_run: str
    dataset_changed: bool = False
    cases_compared: int = 0
    only_in_baseline: int = 0
    only_in_candidate: int = 0
    scorers: list[ScorerComparison] = Field(default_factory=list)
    safety_regressions: list[SafetyRegression] = Field(default_factory=list)
    failures: FailureComparison | None = None

    @property
    def exit_code(self) -> int:
        """1 when blocked, 0 otherwise."""
        return EXIT_BLOCKED if self.blocked else EXIT_OK


def _check_datasets(
    b_head: RunHeader, c_head: RunHeader, b_ids: set[str], c_ids: set[str], allow: bool
) -> bool:
    b_sha, c_sha = b_head.dataset.sha256, c_head.dataset.sha256
    changed = b_sha != c_sha if (b_sha and c_sha) else b_ids != c_ids
    if changed and not allow:
        what = (
            f"dataset sha256 {b_sha[:12]} vs {c_sha[:12]}"
            if b_sha and c_sha and b_sha != c_sha
            else "different case ids"
        )
        raise InputError(
            f"the runs are over different datasets ({what}); pass --allow-dataset-change"
            " to compare only the case ids they share"
        )
    return changed


def _compare_scorer(
    name: str,
    pairs: list[tuple[str, CaseScore, CaseScore]],
    alpha: float,
    allowed: float,
) -> ScorerComparison:
    binary = all(b.binary and c.binary for _, b, c in pairs)
    newly_failing = [cid for cid, b, c in pairs if b.all_passed and not c.all_passed]
    newly_passing = [cid for cid, b, c in pairs if not b.all_passed and c.all_passed]
    n = len(pairs)
    if binary:
        base = sum(bool(b.all_passed) for _, b, _ in pairs) / n
        cand = sum(bool(c.all_passed) for _, _, c in pairs) / n
        p = stats.mcnemar_exact(len(newly_passing), len(newly_failing))
        test = "mcnemar_exact"
    else:
        diffs = [(c.mean or 0.0) - (b.mean or 0.0) for _, b, c in pairs]
        base = sum(b.mean or 0.0 for _, b, _ in pairs) / n
        cand = sum(c.mean or 0.0 for _, _, c in pairs) / n
        res = stats.paired_permutation(diffs, seed=PERMUTATION_SEED)
        p, test = res.p_value, f"paired_permutation ({res.method})"
    delta = cand - base
    significant = p < alpha
    return ScorerComparison(
        scorer=name,
        kind="pass/fail" if binary else "graded",
        paired=n,
        baseline=base,
        candidate=cand,
        delta=delta,
        test=test,
        p_value=p,
        allowed_drop=allowed,
        significant=significant,
        blocks=significant and -delta > allowed + 1e-12,
        newly_failing=newly_failing,
        newly_passing=newly_passing,
    )


def _compare_failures(
    shared: list[str], base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate],
    alpha: float,
) -> FailureComparison:  # fmt: skip
    newly = [cid for cid in shared if cand[cid].any_failed and not base[cid].any_failed]
    recovered = [cid for cid in shared if base[cid].any_failed and not cand[cid].any_failed]
    p = stats.mcnemar_exact(len(newly), len(recovered))
    return FailureComparison(
        paired=len(shared),
        baseline_failed=sum(base[cid].any_failed for cid in shared),
        candidate_failed=sum(cand[cid].any_failed for cid in shared),
        newly_failed=newly,
        recovered=recovered,
        p_value=p,
        blocks=len(newly) > len(recovered) and p < alpha,
    )


def compare_runs(
    baseline_dir: str | Path,
    candidate_dir: str | Path,
    *,
    alpha: float = 0.05,
    max_drop: Mapping[str, float] | None = None,
    allow_dataset_change: bool = False,
) -> GateResult:
    """Compare two runs case by case and decide whether the candidate may ship.

    Reads both runs (streaming; per case only counters are kept) and applies the rules in
    the module docstring. Raises InputError for unusable input: an unreadable run, runs
    with no shared cases, different datasets without ``allow_dataset_change``, an
    ``alpha`` outside (0, 1), or a ``max_drop`` naming a scorer neither run has.
    """
    max_drop = dict(max_drop or {})
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must be within (0, 1), got {alpha}")
    b_head, c_head = read_header(baseline_dir), read_header(candidate_dir)
    base = aggregate_cases(iter_trials(baseline_dir))
    cand = aggregate_cases(iter_trials(candidate_dir))
    for d, agg in ((baseline_dir, base), (candidate_dir, cand)):
        if not agg:
            raise InputError("the run has no trials to compare", file=d)
    changed = _check_datasets(b_head, c_head, set(base), set(cand), allow_dataset_change)
    shared = [cid for cid in base if cid in cand]
    if not shared:
        raise InputError("the runs share no case id; nothing to compare")
    names = list(dict.fromkeys([n for a in base.values() for n in a.scores]))
    names += [
        n for n in dict.fromkeys(n for a in cand.values() for n in a.scores) if n not in names
    ]
    unknown = sorted(set(max_drop) - set(names))
    if unknown:
        raise InputError(f"--max-drop names scorers neither run has: {', '.join(unknown)}")
    for name, v in max_drop.items():
        if not 0 <= v <= 1:
            raise InputError(f"--max-drop {name}={v}: the allowed drop must be within [0, 1]")

    result = GateResult(
        blocked=False,
        alpha=alpha,
        baseline_run=b_head.run_id,
        candidate_run=c_head.run_id,
        dataset_changed=changed,
        cases_compared=len(shared),
        only_in_baseline=len(set(base) - set(cand)),
        only_in_candidate=len(set(cand) - set(base)),
    )
    for name in names:
        pairs = [
            (cid, base[cid].scores[name], cand[cid].scores[name])
            for cid in shared
            if name in base[cid].scores
            and name in cand[cid].scores
            and base[cid].scores[name].applicable
            and cand[cid].scores[name].applicable
        ]
        if not pairs:
            continue
        comp = _compare_scorer(name, pairs, alpha, max_drop.get(name, 0.0))
        result.scorers.append(comp)
        if name in SAFETY_SCORERS:
            comp.safety_blocks = bool(comp.newly_failing)
            for cid in comp.newly_failing:
                reason = cand[cid].scores[name].first_failure or ""
                result.safety_regressions.append(
                    SafetyRegression(scorer=name, case_id=cid, reason=reason)
                )
    result.failures = _compare_failures(shared, base, cand, alpha)
    _decide(result)
    return result


def _decide(r: GateResult) -> None:
    reasons: list[str] = []
    by_scorer: dict[str, int] = {}
    for s in r.safety_regressions:
        by_scorer[s.scorer] = by_scorer.get(s.scorer, 0) + 1
    for name, n in by_scorer.items():
        reasons.append(
            f"{n} case(s) newly fail safety scorer {name} (blocks whatever else improved)"
        )
    for c in r.scorers:
        if c.blocks:
            reasons.append(
                f"{c.scorer} dropped {-c.delta:.3f} (allowed {c.allowed_drop:g}) on"
                f" {c.paired} paired cases, {c.test} p={c.p_value:.3g} < alpha={r.alpha:g}"
            )
    f = r.failures
    if f is not None and f.blocks:
        reasons.append(
            f"failed trials rose from {f.baseline_failed} to {f.candidate_failed} cases,"
            f" mcnemar_exact p={f.p_value:.3g} < alpha={r.alpha:g}"
        )
    r.blocked = bool(reasons)
    if not reasons:
        reasons.append(
            "no new safety failure, no significant regression beyond the allowed drops,"
            " and no significant rise in failed trials"
        )
    r.reasons = reasons
