"""What PASSED needs: evidence that nothing gated got worse beyond its allowed drop.

A check (a compared scorer, failed trials, answered cases) is **settled** when either

- *no case got worse* (paired gate only): on every paired case the candidate's value is at
  least the baseline's (pass/fail: no newly failing case; graded: no lower case mean); or
- *the bound is below the allowed drop*: the one-sided (1 - alpha) upper confidence bound on
  the true drop, a Student t bound on the per-case differences (unpaired: Welch, on the two
  samples), is at most the allowed drop (``max_drop``, default 0).

PASSED needs every check settled (an intersection-union test: each bound at alpha, no
multiplicity correction is needed for "all of them"). What each branch guarantees, and the
simulated rates, are in ``docs/reports.md``. A check that neither blocks nor is settled
cannot tell; :func:`cannot_tell` says what was observed, why, and roughly how many cases
would settle it.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from agenteval.gate.model import ScorerComparison
from agenteval.summary import stats

__all__ = [
    "cannot_tell",
    "cases_to_settle",
    "counts_se",
    "diffs_se",
    "settle",
    "t_upper",
    "upper_bound",
]

EPS = 1e-12


def t_upper(alpha: float, df: int) -> float:
    """The (1 - alpha) quantile of Student's t with ``df`` degrees of freedom (Cornish-Fisher
    expansion to 1/df^3: within 0.5% for df >= 3 at the usual alphas; df <= 2 uses the exact
    closed forms)."""
    if df == 1:
        return math.tan(math.pi * (0.5 - alpha))
    if df == 2:
        return (1 - 2 * alpha) / math.sqrt(2 * alpha * (1 - alpha))
    z = -NormalDist().inv_cdf(alpha)  # not inv_cdf(1 - alpha): 1 - 1e-310 is 1.0
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def diffs_se(diffs: list[float]) -> float:
    """Standard error of the mean of per-case differences (0 for fewer than two)."""
    n = len(diffs)
    if n < 2:
        return 0.0
    mu = sum(diffs) / n
    return math.sqrt(sum((d - mu) ** 2 for d in diffs) / (n - 1) / n)


def counts_se(worse: int, better: int, n: int) -> float:
    """:func:`diffs_se` for differences that are -1 (``worse``), +1 (``better``) or 0."""
    if n < 2:
        return 0.0
    mu = (better - worse) / n
    var = max(0.0, ((worse + better) - n * mu * mu) / (n - 1))
    return math.sqrt(var / n)


def upper_bound(drop: float, se: float, df: int, alpha: float) -> float | None:
    """One-sided (1 - alpha) upper bound on the true drop; None when df < 1."""
    if df < 1:
        return None
    return drop + t_upper(alpha, df) * se


def settle(c: ScorerComparison, alpha: float, paired: bool) -> None:
    """Fill ``drop_upper`` and ``evidence`` (see the module docstring)."""
    c.drop_upper = upper_bound(-c.delta, c.drop_se, c.drop_df, alpha)
    if paired and not c.got_worse and c.paired:
        c.evidence = "no case got worse"
    elif c.drop_upper is not None and c.drop_upper <= c.allowed_drop + EPS:
        c.evidence = "bound below the allowed drop"
    else:
        c.evidence = ""


def cases_to_settle(
    drop: float, se: float, n: int, allowed: float, alpha: float, level: float
) -> int | None:
    """Roughly how many cases, at the per-case spread observed (sd = se * sqrt(n)), would
    settle the check: a drop beyond the allowed one made significant at ``level`` (normal
    approximation), or, when the drop is within it, the bound pushed below it. None when
    no number of cases can (no spread seen, or a drop equal to the allowed one)."""
    sd = se * math.sqrt(n)
    gap = drop - allowed
    if sd <= 0 or abs(gap) < EPS:
        return None
    z = -NormalDist().inv_cdf(level if gap > 0 else alpha)
    return max(n + 1, math.ceil((z * sd / abs(gap)) ** 2))


def _mcnemar_cases(worse: int, better: int, n: int, level: float) -> int:
    """The fewest cases at which the same shares of worse and better cases give an exact
    one-sided McNemar p <= ``level`` (found by doubling, then bisection); when that many
    cases would hold over 1,000 discordant ones, the normal approximation's count instead
    (the exact tails of millions of pairs made each gate take seconds: "roughly" is what
    the line promises)."""
    if worse > better:
        z = -NormalDist().inv_cdf(level)
        approx = math.ceil(z * z * n * (worse + better) / (worse - better) ** 2)
        if approx * (worse + better) / n > 1_000:
            return max(n + 1, approx)

    def ok(m: int) -> bool:
        return stats.mcnemar_one_sided(round(m * worse / n), round(m * better / n)) <= level

    hi = n
    while not ok(hi):
        if hi > 10_000_000:
            return hi
        hi *= 2
    lo = max(1, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
    return hi


def points(c: ScorerComparison, x: float) -> str:
    """A change in points (pass/fail) or score units (graded)."""
    return f"{100 * x:+.1f} pts" if c.kind == "pass/fail" else f"{x:+.3f}"


def cannot_tell(c: ScorerComparison, alpha: float, level: float, ids: str) -> str:
    """One line: observed, why it cannot tell, and roughly how many cases would settle it."""
    n = c.paired or min(c.baseline_n, c.candidate_n)
    where = f"on {c.paired} cases" if c.paired else f"on {c.baseline_n}/{c.candidate_n} cases"
    seen = f"{c.scorer} {points(c, c.delta)} {where}"
    if c.paired:
        worse = len(c.got_worse)
        label = "newly failing" if c.kind == "pass/fail" else "with a lower score"
        seen += f", {worse} {label}" + (f": {ids}" if worse else "")
    drop = -c.delta
    bound = "none" if c.drop_upper is None else points(c, -c.drop_upper).lstrip("-+")
    allowed = points(c, c.allowed_drop).lstrip("+")
    if drop > c.allowed_drop + EPS:
        why = (
            f"a drop, but not significant (Holm p={c.p_adjusted:.3g} > alpha={alpha:g}"
            + (f"; with {c.paired} cases no drop can be" if c.underpowered else "")
            + ")"
        )
    else:
        conf = f"{100 * (1 - alpha):.0f}%"
        why = f"the {conf} bound on the drop, {bound}, is above the allowed {allowed}"
    if c.paired and c.kind == "pass/fail" and drop > c.allowed_drop + EPS:
        need: int | None = _mcnemar_cases(len(c.newly_failing), len(c.newly_passing), n, level)
    elif c.drop_se <= 0 and drop > c.allowed_drop + EPS:  # every case moved the same way
        need = max(n + 1, stats.min_discordant_to_reject(level))
    else:
        need = cases_to_settle(drop, c.drop_se, n, c.allowed_drop, alpha, level)
    c.cases_to_settle = need
    more = (
        f"about {need} cases would settle it"
        if need is not None
        else "more cases alone cannot settle it (set --max-drop to allow a drop)"
    )
    return f"{seen}; cannot tell: {why}; {more}"


def counts_settled(worse: int, better: int, n: int, alpha: float) -> bool:
    """Paired counts (failed trials, answered cases): none got worse, or the bound on the
    net share that got worse is at most 0."""
    if not worse:
        return True
    bound = upper_bound((worse - better) / n, counts_se(worse, better, n), n - 1, alpha)
    return bound is not None and bound <= EPS


def rates_settled(bad1: int, n1: int, bad2: int, n2: int, alpha: float) -> bool:
    """Unpaired shares of bad cases (baseline ``bad1`` of ``n1``, candidate ``bad2`` of
    ``n2``): the candidate has none, or the Welch bound on its rise is at most 0."""
    if not bad2:
        return True
    if not n1 or not n2:
        return False
    p1, p2 = bad1 / n1, bad2 / n2
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    bound = upper_bound(p2 - p1, se, min(n1, n2) - 1, alpha)
    return bound is not None and bound <= EPS
