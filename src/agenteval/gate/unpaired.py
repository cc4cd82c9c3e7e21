"""The unpaired gate: a candidate run against a baseline run that share no case (two
windows of production traffic), compared as two independent samples of cases.

Used automatically when the runs share no case id, or with ``--unpaired`` (then every case
of each run is in its sample, shared ids or not). Cases are still compared as cases, never
as trials: with repeats a case is one observation (its mean over applicable repeats; it
*passed* when every applicable repeat passed; *answered* when every trial has an output;
it has a *failed trial* when some trial has a ``failure``), as in the paired gate
(:mod:`agenteval.gate.paired`). A scorer is compared when it applied on at least one case of each
run: its samples are the cases where it applied.

The candidate is **blocked** (exit 1) when any of these holds:

1. **Safety** (rules, not family tests), per safety scorer, with b of B baseline cases and
   c of C candidate cases failing it (B, C: cases where it gave pass or fail):

   a. *none in baseline*: c >= 1, b = 0, and c * B >= C, i.e. the candidate fails it at a
      rate of at least one per B cases, so on the baseline's volume at least one failure
      was expected and there was none. With equal volumes one failure blocks, as one new
      failing case blocks the paired gate. A baseline that never checked it (B = 0)
      excuses nothing: any candidate failure blocks.
   b. *higher rate*: the candidate's failure rate is higher than the baseline's and
      Fisher's one-sided exact test gives p <= alpha, tested on its own (not
      Holm-adjusted: the safety side errs toward blocking, as the paired rule does).
   c. *silenced*: the baseline has a result for it on some case, the candidate answered
      some case, and on every answered candidate case it gave none (errored, was
      inconclusive, or was not run). "Not applicable" is a result. When only some
      answered candidate cases have none, a note lists them.
2. **Significant regression**: a scorer's drop (baseline minus candidate: pass rate, or
   mean for graded scorers) beyond its allowed drop, Holm-adjusted one-sided p <= alpha.
3. **More failed trials**: a higher share of cases with a failed trial, Holm p <= alpha.
4. **Fewer answered cases**: a lower share of answered cases, Holm p <= alpha; and always
   when the candidate answered none of its cases.

There is no "missing cases" rule: the samples are meant to differ. The tests of 2-4 are one
Holm family (every compared scorer, failed trials, answered cases), so when the candidate
is no worse the chance of blocking by any of them is at most alpha. The tests are in
:mod:`agenteval.gate.two_sample`: Fisher's exact test for pass/fail scorers, failed
trials and answered cases; a permutation test on the means for graded scorers.

**Minimum detectable drop** (per scorer): the smallest true drop from the baseline's
observed pass rate (mean) that blocks with probability >= POWER at the strictest Holm level
alpha / family size, allowed drop included: exact for Fisher's test, a normal approximation
for graded scorers. ``None`` when not even a drop to 0 reaches that power: the scorer is
**underpowered**. The gate is underpowered (exit 3 unless ``allow_underpowered``, and only
when not blocked) when every compared scorer is.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from itertools import chain

from agenteval.errors import InputError
from agenteval.gate import evidence, policies, rules, two_sample
from agenteval.gate.checks import PERMUTATION_SEED, resamples_for, silenced
from agenteval.gate.model import (
    UNPAIRED_METHOD,
    CoverageComparison,
    FailureComparison,
    GateResult,
    ScorerComparison,
    UnpairedSafety,
)
from agenteval.gate.rules import ids as _ids
from agenteval.summary.percase import CaseAggregate, CaseScore

__all__ = ["decide_unpaired"]


def _sd(values: list[float]) -> float:
    """Sample standard deviation (0 for fewer than two values)."""
    if len(values) < 2:
        return 0.0
    mu = sum(values) / len(values)
    return math.sqrt(sum((v - mu) ** 2 for v in values) / (len(values) - 1))


def _applied(runs: Mapping[str, CaseAggregate], name: str) -> list[CaseScore]:
    return [cs for a in runs.values() if (cs := a.scores.get(name)) is not None and cs.applicable]


def decide_unpaired(
    base: Mapping[str, CaseAggregate],
    cand: Mapping[str, CaseAggregate],
    *,
    alpha: float = 0.05,
    max_drop: Mapping[str, float] | None = None,
    safety: Collection[str] = (),
    allow_underpowered: bool = False,
    baseline_run: str = "",
    candidate_run: str = "",
    mode_reason: str = "compared as two independent samples (unpaired)",
    require: Mapping[str, float] | None = None,
) -> GateResult:
    """Apply the rules of the module docstring to per-case aggregates (no file is read).

    Raises InputError for an ``alpha`` outside (0, 1), an empty run, or a ``max_drop``
    naming a scorer neither run has or outside [0, 1].
    """
    rules.check_alpha(alpha)
    if not base or not cand:
        raise InputError("the unpaired gate needs at least one case in each run")
    names = list(
        dict.fromkeys(chain.from_iterable(a.scores for a in (*base.values(), *cand.values())))
    )
    drops = rules.allowed_drops(max_drop, names)
    samples = {name: (_applied(base, name), _applied(cand, name)) for name in names}
    compared = {n: s for n, s in samples.items() if s[0] and s[1]}
    r = GateResult(
        blocked=False,
        mode="unpaired",
        mode_reason=mode_reason,
        allow_underpowered=allow_underpowered,
        alpha=alpha,
        method=UNPAIRED_METHOD,
        baseline_run=baseline_run,
        candidate_run=candidate_run,
        baseline_cases=len(base),
        candidate_cases=len(cand),
        power=two_sample.POWER,
        safety_scorers=sorted(n for n in names if n in safety),
        not_compared=[n for n in names if n not in compared],
        family_size=len(compared) + 2,
    )
    lvl = rules.level(alpha, r.family_size)
    cache: two_sample.CriticalCache = {}
    r.scorers = [
        _compare_scorer(name, b, c, drops.get(name, 0.0), lvl, cache)
        for name, (b, c) in compared.items()
    ]
    r.failures = f = _compare_failures(base, cand)
    r.coverage = cov = _compare_coverage(base, cand)
    r.unpaired_safety = [_safety(name, base, cand, alpha) for name in sorted(safety)]
    r.unpaired_safety = [s for s in r.unpaired_safety if s.baseline_checked or s.candidate_checked]
    r.safety_unchecked, r.safety_unchecked_blocks = _unchecked(base, cand, safety)
    r.policies = policies.require(cand, require or {}, names)
    rules.flag(
        r,
        safety=safety,
        safety_failing={s.scorer for s in r.unpaired_safety if s.blocks},
        failures_settled=evidence.rates_settled(
            f.baseline_failed, f.baseline_cases, f.candidate_failed, f.candidate_cases, alpha
        ),
        coverage_settled=evidence.rates_settled(
            cov.baseline_cases - cov.baseline_answered,
            cov.baseline_cases,
            cov.candidate_cases - cov.candidate_answered,
            cov.candidate_cases,
            alpha,
        ),
        more_failed=_rate(f.candidate_failed, f.candidate_cases)
        > _rate(f.baseline_failed, f.baseline_cases),
        fewer_answered=_rate(cov.candidate_answered, cov.candidate_cases)
        < _rate(cov.baseline_answered, cov.baseline_cases),
    )
    rules.explain(r, _Unpaired(cand, lvl))
    return r


def _rate(k: int, n: int) -> float:
    return k / n if n else 0.0


def _compare_scorer(
    name: str,
    b: list[CaseScore],
    c: list[CaseScore],
    allowed: float,
    level: float,
    cache: two_sample.CriticalCache,
) -> ScorerComparison:
    """One scorer's two samples: Fisher (pass/fail) or permutation (graded), raw p-value,
    and its minimum detectable drop at ``level`` (the strictest Holm level)."""
    binary = all(s.binary for s in (*b, *c))
    n1, n2 = len(b), len(c)
    if binary:
        x1 = sum(s.passed == s.applicable for s in b)
        x2 = sum(s.passed == s.applicable for s in c)
        base, cand = x1 / n1, x2 / n2
        p, test = two_sample.fisher_one_sided(x1, n1, x2, n2), "fisher_one_sided"
        mdd = two_sample.fisher_min_detectable_drop(n1, n2, base, level, allowed, cache=cache)
        se = math.sqrt(base * (1 - base) / n1 + cand * (1 - cand) / n2)
    else:
        bv, cv = [s.mean or 0.0 for s in b], [s.mean or 0.0 for s in c]
        base, cand = sum(bv) / n1, sum(cv) / n2
        res = two_sample.two_sample_permutation(
            bv, cv, seed=PERMUTATION_SEED, resamples=resamples_for(level)
        )
        p, test = res.p_value, f"permutation_two_sample ({res.method})"
        sd = _sd(bv) if n1 >= 2 else 0.0
        if sd == 0.0:  # no spread seen in the baseline: not proof of none, use both runs'
            sd = _sd(bv + cv)
        mdd = two_sample.shift_min_detectable_drop(n1, n2, sd, base, level, allowed)
        se = math.sqrt(_sd(bv) ** 2 / n1 + _sd(cv) ** 2 / n2)
    return ScorerComparison(
        scorer=name,
        kind="pass/fail" if binary else "graded",
        paired=0,
        baseline_n=n1,
        candidate_n=n2,
        baseline=base,
        candidate=cand,
        delta=cand - base,
        test=test,
        p_value=p,
        allowed_drop=allowed,
        underpowered=mdd is None,
        min_detectable_drop=mdd,
        drop_se=se,
        drop_df=min(n1, n2) - 1,
    )


def _compare_failures(
    base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate]
) -> FailureComparison:
    """Cases with a failed trial, as shares of each run's cases (raw one-sided p)."""
    bf = sum(a.any_failed for a in base.values())
    cf = sum(a.any_failed for a in cand.values())
    nb, nc = len(base), len(cand)
    return FailureComparison(
        paired=0,
        baseline_cases=nb,
        candidate_cases=nc,
        baseline_failed=bf,
        candidate_failed=cf,
        test="fisher_one_sided",
        p_value=two_sample.fisher_one_sided(nb - bf, nb, nc - cf, nc),
    )


def _compare_coverage(
    base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate]
) -> CoverageComparison:
    """Answered cases, as shares of each run's cases (raw one-sided p)."""
    ba = sum(a.all_answered for a in base.values())
    ca = sum(a.all_answered for a in cand.values())
    return CoverageComparison(
        paired=0,
        baseline_cases=len(base),
        candidate_cases=len(cand),
        baseline_answered=ba,
        candidate_answered=ca,
        test="fisher_one_sided",
        p_value=two_sample.fisher_one_sided(ba, len(base), ca, len(cand)),
        answered_none=ca == 0,
    )


def _safety(
    name: str, base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate], alpha: float
) -> UnpairedSafety:
    """Rules 1a and 1b of the module docstring for one safety scorer."""
    b, c = _applied(base, name), _applied(cand, name)
    bf = sum(s.failed > 0 for s in b)
    failing = [cid for cid, a in cand.items() if (cs := a.scores.get(name)) and cs.failed]
    big_b, big_c, cf = len(b), len(c), len(failing)
    p = two_sample.fisher_one_sided(big_b - bf, big_b, big_c - cf, big_c)
    s = UnpairedSafety(
        scorer=name,
        baseline_failed=bf,
        baseline_checked=big_b,
        candidate_failed=cf,
        candidate_checked=big_c,
        p_value=p,
        failing_cases=failing,
    )
    if cf and bf == 0 and (big_b == 0 or cf * big_b >= big_c):
        s.rule, s.blocks = "none in baseline", True
    elif cf and p <= alpha and _rate(cf, big_c) > _rate(bf, big_b):
        s.rule, s.blocks = "higher rate", True
    return s


def _unchecked(
    base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate], safety: Collection[str]
) -> tuple[dict[str, list[str]], list[str]]:
    """Rule 1c: per safety scorer, the answered candidate cases where it gave no result
    (when the baseline has a result somewhere); the scorers where that is every one."""
    answered = [cid for cid, a in cand.items() if a.all_answered]
    return silenced(
        {name: answered for name in sorted(safety) if _applied(base, name) and answered}, cand
    )


def _pct(k: int, n: int) -> str:
    return f"{100 * _rate(k, n):.1f}% ({k} of {n} cases)"


class _Unpaired:
    """The unpaired gate's sentences (a :class:`~agenteval.gate.rules.Wording`)."""

    passed = (
        "no safety failure beyond the baseline's, no significant regression beyond the"
        " allowed drops, no significant rise in failed trials and no significant fall"
        " in answered cases; and on every check the bound on the drop is within the"
        " allowed one"
    )
    not_shown = (
        "nothing blocks, but there is no evidence that nothing got worse beyond its"
        " allowed drop (see 'cannot tell'; unpaired runs need --max-drop to pass)"
    )
    not_compared = "not scored in both runs"

    def __init__(self, cand: Mapping[str, CaseAggregate], lvl: float) -> None:
        self.cand, self.lvl = cand, lvl

    def safety(self, r: GateResult) -> list[str]:
        out: list[str] = []
        for s in r.unpaired_safety:
            if s.rule == "none in baseline":
                out.append(
                    f"safety scorer {s.scorer} failed on {s.candidate_failed} of"
                    f" {s.candidate_checked} candidate case(s) ({_ids(s.failing_cases)}) and"
                    f" on none of the baseline's {s.baseline_checked} (blocks whatever else"
                    " improved)"
                )
            elif s.rule == "higher rate":
                out.append(
                    f"safety scorer {s.scorer} failure rate rose from"
                    f" {_pct(s.baseline_failed, s.baseline_checked)} to"
                    f" {_pct(s.candidate_failed, s.candidate_checked)}, fisher_one_sided"
                    f" p={s.p_value:.3g} <= alpha={r.alpha:g} (not Holm-adjusted: a safety"
                    " rule)"
                )
        for name in r.safety_unchecked_blocks:
            out.append(
                f"safety scorer {name} gave no result in the candidate (error, inconclusive or"
                f" not run) on any of its {len(r.safety_unchecked[name])} answered case(s),"
                " though it gave results in the baseline"
            )
        return out

    def cases(self, c: ScorerComparison) -> str:
        return f"{c.baseline_n} baseline vs {c.candidate_n} candidate cases"

    def failed_rise(self, f: FailureComparison) -> str:
        cids = [cid for cid, a in self.cand.items() if a.any_failed]
        return (
            f"cases with a failed trial rose from {_pct(f.baseline_failed, f.baseline_cases)}"
            f" to {_pct(f.candidate_failed, f.candidate_cases)} (e.g. {_ids(cids)})"
        )

    def answered_none(self, r: GateResult, cov: CoverageComparison) -> str:
        return (
            f"the candidate answered none of its {cov.candidate_cases} cases (the baseline"
            f" answered {cov.baseline_answered} of {cov.baseline_cases})"
        )

    def answered_fall(self, cov: CoverageComparison) -> str:
        return (
            f"{_pct(cov.baseline_answered, cov.baseline_cases)} to"
            f" {_pct(cov.candidate_answered, cov.candidate_cases)}"
        )

    def missing(self, cov: CoverageComparison) -> str:
        raise AssertionError("the unpaired gate has no missing-cases rule")

    def power_notes(self, r: GateResult) -> list[str]:
        power = f"{100 * two_sample.POWER:.0f}%"
        if r.underpowered:
            return [
                r.mode_reason,
                f"underpowered: on {r.baseline_cases} baseline and {r.candidate_cases}"
                f" candidate cases no scorer could detect even a drop to 0 with {power} power"
                f" at alpha/{r.family_size} = {self.lvl:.3g}",
            ]
        weak = [c for c in r.scorers if c.underpowered]
        if not weak:
            return [r.mode_reason]
        return [
            r.mode_reason,
            f"{len(weak)} scorer(s) could not detect even a drop to 0 with {power} power: "
            + ", ".join(f"{c.scorer} ({c.baseline_n}/{c.candidate_n})" for c in weak[:5])
            + (" ..." if len(weak) > 5 else ""),
        ]

    def unchecked(self, name: str, cids: list[str]) -> str:
        return (
            f"safety scorer {name} gave no result (error, inconclusive or not run) on"
            f" {len(cids)} answered candidate case(s): {_ids(cids)}"
        )

    def last_notes(self, r: GateResult) -> list[str]:
        return []
