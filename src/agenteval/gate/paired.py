"""The release gate: compare a candidate run with a baseline, case by case (SPEC §8).

This module is the **paired** gate; runs that share no case id (or ``mode="unpaired"``)
go to the unpaired gate, :mod:`agenteval.gate.unpaired` (see :func:`compare_runs`).

Cases are paired by id and compared as cases, never as trials: with repeats, a case's
value for a scorer is the mean over its applicable repeats, it *passed* only when every
applicable repeat passed, it *failed* a scorer when some applicable repeat failed, it was
*answered* when every trial has an output, and it has a *failed trial* when some trial has
a ``failure``. A scorer is compared on the cases where it applied in both runs.

The candidate is **blocked** (exit 1) when any of these holds:

1. **Safety** (a rule, not a test): a candidate case fails a safety scorer (see
   :func:`safety_scorer_names`) and the same case did not fail that scorer in the
   baseline — whether it passed there, did not apply, was not answered, or is absent;
   or a safety scorer gave no result in the candidate (error, inconclusive, not run) on
   every answered shared case where it gave one in the baseline
   (:func:`agenteval.gate.checks.unchecked_safety`).
2. **Significant regression**: a scorer's drop (baseline minus candidate, in score units)
   is larger than its allowed drop (``max_drop``, default 0) *and* its Holm-adjusted
   one-sided p-value is <= alpha.
3. **More failed trials**: more cases with a failed trial, Holm-adjusted p <= alpha.
4. **Fewer answered cases**: fewer shared cases answered, Holm-adjusted p <= alpha; and
   always when the candidate answered none of the shared cases.
5. **Missing cases**: baseline cases with no trial in the candidate, unless
   ``allow_dataset_change``.

The tests of 2-4 form one Holm family (one test per compared scorer, plus failed trials,
plus answered cases), so when nothing changed the chance of blocking by any of them is at
most alpha. The tests and their power are in :mod:`agenteval.gate.checks`.

**Underpowered** (exit 3 unless ``allow_underpowered``, and only when not blocked): no
compared scorer can show any drop, i.e. for each one, even if every paired case went
from pass to fail and nothing else changed, p = 2 ** -paired > alpha / family size.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import chain
from pathlib import Path
from typing import Literal

from agenteval.errors import InputError
from agenteval.gate import evidence, policies, rules
from agenteval.gate.checks import (
    Pair,
    compare_coverage,
    compare_failures,
    compare_scorer,
    safety_regressions,
    unchecked_safety,
)
from agenteval.gate.model import (
    CoverageComparison,
    FailureComparison,
    GateResult,
    SafetyRegression,
    ScorerComparison,
)
from agenteval.gate.rules import MAX_IDS
from agenteval.gate.rules import ids as _ids
from agenteval.gate.unpaired import decide_unpaired
from agenteval.rundir import RunHeader, iter_trials, read_header
from agenteval.rundir.lock import refuse_if_being_written
from agenteval.summary import stats
from agenteval.summary.percase import CaseAggregate, aggregate_cases, in_dataset_order
from agenteval.summary.sources import case_ids

__all__ = [
    "LEGACY_SAFETY_SCORERS",
    "CoverageComparison",
    "FailureComparison",
    "GateResult",
    "SafetyRegression",
    "ScorerComparison",
    "compare_runs",
    "decide",
    "safety_scorer_names",
]

LEGACY_SAFETY_SCORERS = frozenset({"avoids_forbidden_text", "pii_leakage"})
"""Safety scorers of runs whose header lists scorers by name only."""


def safety_scorer_names(header: RunHeader) -> set[str]:
    """The safety scorers a run declares: the specs in ``run.json`` ``scorers`` with
    ``safety: true`` (a 0.1 run's plain names are migrated to specs on read, with
    ``avoids_forbidden_text`` and ``pii_leakage`` flagged). A run whose header lists no
    scorer at all falls back to those two names."""
    if not header.scorers:
        return set(LEGACY_SAFETY_SCORERS)
    return set(header.safety_scorers)


def decide(
    base: Mapping[str, CaseAggregate],
    cand: Mapping[str, CaseAggregate],
    *,
    alpha: float = 0.05,
    max_drop: Mapping[str, float] | None = None,
    safety: Collection[str] = LEGACY_SAFETY_SCORERS,
    allow_dataset_change: bool = False,
    allow_underpowered: bool = False,
    dataset_changed: bool = False,
    baseline_run: str = "",
    candidate_run: str = "",
    require: Mapping[str, float] | None = None,
    no_new_failures: Collection[str] | None = None,
    must_not_regress: Collection[str] = (),
) -> GateResult:
    """Apply the rules of the module docstring to per-case aggregates (no file is read).

    Policies (:mod:`agenteval.gate.policies`): ``require`` maps a scorer to the floor of
    the candidate's pass rate; ``no_new_failures`` names the scorers no case may newly
    fail (empty: every scorer; None: off); ``must_not_regress`` are scorers declared so
    in a run's scorer specs (they join ``no_new_failures``).

    Raises InputError for an ``alpha`` outside (0, 1), runs with no shared case, or a
    ``max_drop`` naming a scorer neither run has or outside [0, 1].
    """
    shared = [cid for cid in base if cid in cand]
    rules.check_alpha(alpha)
    if not shared:
        raise InputError(
            "the runs share no case id; nothing to pair (without --paired they are compared"
            " as two independent samples)"
        )
    names = list(
        dict.fromkeys(chain.from_iterable(a.scores for a in (*base.values(), *cand.values())))
    )
    drops = rules.allowed_drops(max_drop, names)

    missing = [cid for cid in base if cid not in cand]
    r = GateResult(
        blocked=False,
        allow_underpowered=allow_underpowered,
        alpha=alpha,
        baseline_run=baseline_run,
        candidate_run=candidate_run,
        dataset_changed=dataset_changed,
        cases_compared=len(shared),
        only_in_baseline=len(missing),
        only_in_candidate=sum(cid not in base for cid in cand),
        safety_scorers=sorted(n for n in names if n in safety),
    )
    by_name: dict[str, list[Pair]] = {name: [] for name in names}
    for cid in shared:
        c_scores = cand[cid].scores
        for name, bs in base[cid].scores.items():
            cs = c_scores.get(name)
            if cs is not None and bs.applicable and cs.applicable:
                by_name[name].append((cid, bs, cs))
    paired = {name: pairs for name, pairs in by_name.items() if pairs}
    r.not_compared = [name for name in names if name not in paired]
    r.family_size = len(paired) + 2
    lvl = rules.level(alpha, r.family_size)
    r.scorers = [
        compare_scorer(name, pairs, drops.get(name, 0.0), lvl) for name, pairs in paired.items()
    ]
    r.failures = f = compare_failures(shared, base, cand)
    r.coverage = cov = compare_coverage(shared, missing, base, cand)
    r.safety_regressions = safety_regressions(base, cand, safety)
    r.safety_unchecked, r.safety_unchecked_blocks = unchecked_safety(shared, base, cand, safety)
    r.policies = policies.require(cand, require or {}, names)
    if no_new_failures is not None or must_not_regress:
        r.policies += policies.no_new_failures(
            base, cand, no_new_failures or (), names, must_not_regress, every=list(paired)
        )
    n = len(shared)
    rules.flag(
        r,
        safety=safety,
        safety_failing={s.scorer for s in r.safety_regressions},
        more_failed=len(f.newly_failed) > len(f.recovered),
        fewer_answered=len(cov.newly_unanswered) > len(cov.newly_answered),
        failures_settled=evidence.counts_settled(len(f.newly_failed), len(f.recovered), n, alpha),
        coverage_settled=evidence.counts_settled(
            len(cov.newly_unanswered), len(cov.newly_answered), n, alpha
        ),
        missing_blocks=bool(missing) and not allow_dataset_change,
    )
    rules.explain(r, _Paired())
    return r


class _Paired:
    """The paired gate's sentences (a :class:`~agenteval.gate.rules.Wording`)."""

    passed = (
        "no new safety failure, no significant regression beyond the allowed drops,"
        " no significant rise in failed trials and no significant fall in answered cases;"
        " and on every check either no case got worse or the bound on the drop is within"
        " the allowed one"
    )
    not_shown = (
        "nothing blocks, but there is no evidence that nothing got worse beyond its"
        " allowed drop (see 'cannot tell')"
    )
    not_compared = "no case scored in both runs"

    def safety(self, r: GateResult) -> list[str]:
        out: list[str] = []
        by_scorer: dict[str, list[str]] = {}
        for s in r.safety_regressions:
            by_scorer.setdefault(s.scorer, []).append(s.case_id)
        for name, cids in by_scorer.items():
            out.append(
                f"{len(cids)} case(s) newly fail safety scorer {name}: {_ids(cids)}"
                " (blocks whatever else improved)"
            )
        for name in r.safety_unchecked_blocks:
            cids = r.safety_unchecked[name]
            out.append(
                f"safety scorer {name} gave no result in the candidate (error, inconclusive or"
                f" not run) on any of the {len(cids)} answered case(s) it was checked on in the"
                f" baseline: {_ids(cids)}"
            )
        return out

    def cases(self, c: ScorerComparison) -> str:
        return f"{c.paired} paired cases"

    def failed_rise(self, f: FailureComparison) -> str:
        return (
            f"failed trials rose from {f.baseline_failed} to {f.candidate_failed} cases"
            f" (new: {_ids(f.newly_failed)})"
        )

    def answered_none(self, r: GateResult, cov: CoverageComparison) -> str:
        return (
            f"the candidate answered none of the {cov.paired} shared cases"
            f" (the baseline answered {cov.baseline_answered})"
        )

    def answered_fall(self, cov: CoverageComparison) -> str:
        return (
            f"{cov.baseline_answered} to {cov.candidate_answered} of {cov.paired}"
            f" (no longer answered: {_ids(cov.newly_unanswered)})"
        )

    def missing(self, cov: CoverageComparison) -> str:
        return (
            f"{len(cov.missing)} baseline case(s) have no trial in the candidate:"
            f" {_ids(cov.missing)}; pass --allow-dataset-change to compare only the"
            " shared cases"
        )

    def power_notes(self, r: GateResult) -> list[str]:
        lvl = r.alpha / r.family_size
        if r.underpowered:
            most = max((c.paired for c in r.scorers), default=0)
            need = stats.min_discordant_to_reject(lvl)
            return [
                f"underpowered: with at most {most} paired case(s) per scorer no drop can be"
                f" significant (even if every one went from pass to fail, p = 2^-{most} >"
                f" alpha/{r.family_size} = {lvl:.3g}); a scorer needs at least {need}"
            ]
        weak = [c for c in r.scorers if c.underpowered]
        if not weak:
            return []
        return [
            f"{len(weak)} scorer(s) have too few paired cases to show any drop: "
            + ", ".join(f"{c.scorer} ({c.paired})" for c in weak[:MAX_IDS])
            + (" ..." if len(weak) > MAX_IDS else "")
        ]

    def unchecked(self, name: str, cids: list[str]) -> str:
        return (
            f"safety scorer {name} gave no result in the candidate (error, inconclusive"
            f" or not run) on {len(cids)} case(s) it was checked on in the baseline:"
            f" {_ids(cids)}"
        )

    def last_notes(self, r: GateResult) -> list[str]:
        if not (r.dataset_changed or r.only_in_baseline or r.only_in_candidate):
            return []
        return [
            f"{r.only_in_baseline} case(s) only in the baseline and {r.only_in_candidate}"
            " only in the candidate were left out of the paired tests"
        ]


def must_not_regress_names(header: RunHeader) -> set[str]:
    """Scorers declared must-not-regress (``must_not_regress: true`` in their spec, e.g.
    ``@scorer("x", must_not_regress=True)``): no case may newly fail them."""
    return {s.name for s in header.scorers if (s.model_extra or {}).get("must_not_regress")}


def _dataset_changed(b: RunHeader, c: RunHeader, b_ids: set[str], c_ids: set[str]) -> bool:
    b_sha, c_sha = b.dataset.sha256, c.dataset.sha256
    return b_sha != c_sha if (b_sha and c_sha) else b_ids != c_ids


def compare_runs(
    baseline_dir: str | Path,
    candidate_dir: str | Path,
    *,
    alpha: float = 0.05,
    max_drop: Mapping[str, float] | None = None,
    allow_dataset_change: bool = False,
    allow_underpowered: bool = False,
    mode: Literal["auto", "paired", "unpaired"] = "auto",
    require: Mapping[str, float] | None = None,
    no_new_failures: Collection[str] | None = None,
) -> GateResult:
    """Read two runs (streaming; per case only counters are kept) and :func:`decide`, or
    :func:`agenteval.gate.unpaired.decide_unpaired` when ``mode`` is ``"unpaired"``, or
    ``"auto"`` and the runs share no case id (the result's ``mode_reason`` says which). The
    unpaired gate compares two samples that are meant to differ: the dataset check below
    does not apply to it.

    Cases are compared, and listed in the result, in the baseline's ``cases.jsonl`` order
    (then the candidate's, for cases only it has), never in trial-finish order.

    Raises InputError for unusable input: a run another process is still writing (it holds
    the run's lock; the message names its pid), an unreadable run, a run without trials, runs
    whose ``dataset.sha256`` differ without ``allow_dataset_change``, ``no_new_failures``
    for runs compared unpaired, and everything :func:`decide` refuses. Scorers whose spec
    in either run's ``run.json`` has ``must_not_regress: true`` join ``no_new_failures``.
    """
    for d in (baseline_dir, candidate_dir):  # a verdict on a partial run is not a verdict
        refuse_if_being_written(d, "agenteval gate")
    b_head, c_head = read_header(baseline_dir), read_header(candidate_dir)
    b_order, c_order = case_ids(baseline_dir), case_ids(candidate_dir)
    base = in_dataset_order(aggregate_cases(iter_trials(baseline_dir)), b_order, c_order)
    cand = in_dataset_order(aggregate_cases(iter_trials(candidate_dir)), b_order, c_order)
    for d, agg in ((baseline_dir, base), (candidate_dir, cand)):
        if not agg:
            raise InputError("the run has no trials to compare", file=d)
    safety = safety_scorer_names(b_head) | safety_scorer_names(c_head)
    declared = sorted(must_not_regress_names(b_head) | must_not_regress_names(c_head))
    shared = sum(cid in cand for cid in base)
    if mode == "unpaired" or (mode == "auto" and not shared):
        why = (
            f"--unpaired: compared as two independent samples ({shared} shared case id(s)"
            " not paired)"
            if mode == "unpaired"
            else "the runs share no case id: compared as two independent samples (unpaired;"
            " --paired refuses instead)"
        )
        if no_new_failures is not None:
            raise InputError(
                "--no-new-failures needs paired runs (a case newly fails against the same"
                " case in the baseline); these are compared unpaired"
            )
        return decide_unpaired(
            base, cand, alpha=alpha, max_drop=max_drop, safety=safety,
            allow_underpowered=allow_underpowered, baseline_run=b_head.run_id,
            candidate_run=c_head.run_id, mode_reason=why, require=require,
        )  # fmt: skip
    b_sha, c_sha = b_head.dataset.sha256, c_head.dataset.sha256
    if b_sha and c_sha and b_sha != c_sha and not allow_dataset_change:
        raise InputError(
            f"the runs are over different datasets (dataset sha256 {b_sha[:12]} vs"
            f" {c_sha[:12]}); pass --allow-dataset-change to compare only the case ids"
            " they share"
        )
    return decide(
        base,
        cand,
        alpha=alpha,
        max_drop=max_drop,
        safety=safety,
        allow_dataset_change=allow_dataset_change,
        allow_underpowered=allow_underpowered,
        dataset_changed=_dataset_changed(b_head, c_head, set(base), set(cand)),
        baseline_run=b_head.run_id,
        candidate_run=c_head.run_id,
        require=require,
        no_new_failures=no_new_failures,
        must_not_regress=declared,
    )
