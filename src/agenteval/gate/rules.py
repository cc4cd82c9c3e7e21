"""The gate's skeleton, shared by the paired and the unpaired gate: the option checks, the
Holm family, the blocking flags, and the verdict and its explanation.

Each gate computes its own comparisons (:mod:`agenteval.gate.checks`,
:mod:`agenteval.gate.unpaired`) and says them in its own words (a :class:`Wording`); what
blocks is decided here, once, from explicit flags (:func:`blocking`), never from whether a
sentence was written.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Protocol

from agenteval.errors import InputError
from agenteval.gate import evidence
from agenteval.gate.model import (
    CoverageComparison,
    FailureComparison,
    GateResult,
    ScorerComparison,
)
from agenteval.summary import stats

__all__ = [
    "MAX_IDS",
    "Wording",
    "allowed_drops",
    "blocking",
    "check_alpha",
    "explain",
    "flag",
    "ids",
    "level",
]

MAX_IDS = 5
EPS = 1e-12


def ids(case_ids: list[str]) -> str:
    """Up to MAX_IDS case ids, and how many more."""
    more = f" (+{len(case_ids) - MAX_IDS} more)" if len(case_ids) > MAX_IDS else ""
    return ", ".join(case_ids[:MAX_IDS]) + more


def check_alpha(alpha: float) -> None:
    """InputError for an alpha outside (0, 1)."""
    if not 0 < alpha < 1:
        raise InputError(f"must be within (0, 1), got {alpha}", field="alpha")


def allowed_drops(max_drop: Mapping[str, float] | None, names: Iterable[str]) -> dict[str, float]:
    """The checked ``max_drop``; InputError for a scorer neither run has, or an allowed
    drop outside [0, 1]."""
    drops = dict(max_drop or {})
    unknown = sorted(set(drops) - set(names))
    if unknown:
        raise InputError(f"names scorers neither run has: {', '.join(unknown)}", field="max_drop")
    for name, v in drops.items():
        if not 0 <= v <= 1:
            raise InputError(
                f"{name}={v}: the allowed drop must be within [0, 1]", field="max_drop"
            )
    return drops


def level(alpha: float, family_size: int) -> float:
    """The strictest Holm level, alpha / family size (InputError when it is 0)."""
    lvl = alpha / family_size
    if lvl <= 0:
        raise InputError(
            f"{alpha:g} is too small: alpha / {family_size} tests is 0 in floating point",
            field="alpha",
        )
    return lvl


def flag(
    r: GateResult,
    *,
    safety: Collection[str],
    safety_failing: Collection[str],
    more_failed: bool,
    fewer_answered: bool,
    failures_settled: bool,
    coverage_settled: bool,
    missing_blocks: bool = False,
) -> None:
    """Holm-adjust the family (every compared scorer, failed trials, answered cases) and
    set every comparison's flags. ``safety_failing``: the safety scorers whose rule blocks;
    ``more_failed`` / ``fewer_answered``: the candidate is worse on those counts (the
    direction; significance is tested here); ``*_settled``: the evidence for PASSED on
    those counts (:mod:`agenteval.gate.evidence`)."""
    f, cov = _parts(r)
    tests: list[ScorerComparison | FailureComparison | CoverageComparison] = [*r.scorers, f, cov]
    for t, adj in zip(tests, stats.holm([t.p_value for t in tests]), strict=True):
        t.p_adjusted = adj
    for c in r.scorers:
        c.safety = c.scorer in safety
        c.significant = c.p_adjusted <= r.alpha and c.delta < 0
        c.blocks = c.significant and -c.delta > c.allowed_drop + EPS
        c.safety_blocks = c.scorer in safety_failing
    f.blocks = f.p_adjusted <= r.alpha and more_failed
    cov.blocks = cov.answered_none or (cov.p_adjusted <= r.alpha and fewer_answered)
    cov.missing_blocks = missing_blocks
    f.settled, cov.settled = failures_settled, coverage_settled
    r.underpowered = all(c.underpowered for c in r.scorers)
    for c in r.scorers:
        evidence.settle(c, r.alpha, paired=r.mode == "paired")


def blocking(r: GateResult) -> bool:
    """Whether a rule blocks, from the flags alone."""
    f, cov = _parts(r)
    return (
        bool(r.safety_regressions)
        or any(s.blocks for s in r.unpaired_safety)
        or bool(r.safety_unchecked_blocks)
        or any(c.blocks for c in r.scorers)
        or f.blocks
        or cov.blocks
        or cov.missing_blocks
        or any(p.blocks for p in r.policies)
    )


def settled(r: GateResult) -> bool:
    """PASSED's evidence: some scorer compared, and every scorer, failed trials and
    answered cases settled (:mod:`agenteval.gate.evidence`)."""
    f, cov = _parts(r)
    return bool(r.scorers) and all(c.evidence for c in r.scorers) and f.settled and cov.settled


class Wording(Protocol):
    """What one gate says in its own words (the paired gate speaks of pairs, the unpaired
    of shares of each run's cases); the sentences' frames are :func:`explain`'s."""

    passed: str
    """The reason when nothing blocks and every check is settled."""
    not_shown: str
    """The reason when nothing blocks but some check cannot tell."""
    not_compared: str
    """Why a scorer is not compared (in parentheses)."""

    def safety(self, r: GateResult) -> list[str]:
        """One sentence per blocking safety rule."""
        ...

    def cases(self, c: ScorerComparison) -> str:
        """The cases a scorer was compared on."""
        ...

    def failed_rise(self, f: FailureComparison) -> str:
        """How failed trials rose."""
        ...

    def answered_none(self, r: GateResult, cov: CoverageComparison) -> str: ...

    def answered_fall(self, cov: CoverageComparison) -> str:
        """From what to what answered cases fell."""
        ...

    def missing(self, cov: CoverageComparison) -> str: ...

    def power_notes(self, r: GateResult) -> list[str]:
        """The notes that come first: what the comparison cannot show."""
        ...

    def unchecked(self, name: str, cids: list[str]) -> str:
        """A safety scorer with no result on some (not all) cases."""
        ...

    def last_notes(self, r: GateResult) -> list[str]: ...


def explain(r: GateResult, say: Wording) -> None:
    """Set ``blocked`` from the flags, then ``reasons`` (one per blocking rule, in the
    rules' order, or the passed sentence) and ``notes``."""
    r.blocked = blocking(r)
    f, cov = _parts(r)

    def holm(p_adjusted: float) -> str:
        return f"Holm-adjusted p={p_adjusted:.3g} <= alpha={r.alpha:g}"

    reasons = say.safety(r)
    reasons += [
        f"{c.scorer} dropped {-c.delta:.3f} (allowed {c.allowed_drop:g}) on {say.cases(c)},"
        f" {c.test} p={c.p_value:.3g}, {holm(c.p_adjusted)}"
        for c in r.scorers
        if c.blocks
    ]
    if f.blocks:
        reasons.append(f"{say.failed_rise(f)}, {holm(f.p_adjusted)}")
    if cov.answered_none:
        reasons.append(say.answered_none(r, cov))
    elif cov.blocks:
        reasons.append(f"answered cases fell from {say.answered_fall(cov)}, {holm(cov.p_adjusted)}")
    if cov.missing_blocks:
        reasons.append(say.missing(cov))
    reasons += [p.says for p in r.policies if p.blocks]
    if r.blocked != bool(reasons):  # a rule without its sentence is a bug, not a verdict
        raise AssertionError(f"blocked={r.blocked} but reasons={reasons!r}")
    r.settled = not r.blocked and settled(r)
    r.cannot_tell = [] if r.blocked or r.settled else _cannot_tell(r, f, cov)
    r.reasons = reasons or ([say.passed] if r.settled else [say.not_shown])
    notes = say.power_notes(r)
    notes += [
        say.unchecked(name, cids)
        for name, cids in r.safety_unchecked.items()
        if name not in r.safety_unchecked_blocks
    ]
    if r.not_compared:
        notes.append(f"not compared ({say.not_compared}): " + ", ".join(r.not_compared[:10]))
    r.notes = notes + say.last_notes(r)


def _cannot_tell(r: GateResult, f: FailureComparison, cov: CoverageComparison) -> list[str]:
    lvl = r.alpha / r.family_size
    out = [
        evidence.cannot_tell(c, r.alpha, lvl, ids(c.got_worse)) for c in r.scorers if not c.evidence
    ]
    if not r.scorers:
        out.append("no scorer was compared (none gave a result on a case of both runs)")
    if not f.settled:
        out.append(
            f"failed trials: {f.baseline_failed} -> {f.candidate_failed} cases"
            + (f" (new: {ids(f.newly_failed)})" if f.newly_failed else "")
            + f"; cannot tell: a rise, but not significant (Holm p={f.p_adjusted:.3g} >"
            f" alpha={r.alpha:g})"
        )
    if not cov.settled:
        out.append(
            f"answered cases: {cov.baseline_answered} -> {cov.candidate_answered}"
            + (
                f" (no longer answered: {ids(cov.newly_unanswered)})"
                if cov.newly_unanswered
                else ""
            )
            + f"; cannot tell: a fall, but not significant (Holm p={cov.p_adjusted:.3g} >"
            f" alpha={r.alpha:g})"
        )
    return out


def _parts(r: GateResult) -> tuple[FailureComparison, CoverageComparison]:
    if r.failures is None or r.coverage is None:
        raise ValueError("a gate result without its failure and coverage comparisons")
    return r.failures, r.coverage
