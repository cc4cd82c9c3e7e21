"""Two-sample (unpaired) one-sided tests and their power, with no third-party dependency.

What the unpaired gate (:mod:`agenteval.gate.unpaired`) uses to ask "is the candidate
worse?" of two independent samples of cases (two windows of traffic share no case):

- **Pass/fail**: Fisher's exact test, one-sided (:func:`fisher_one_sided`). Given the
  total number of passing cases, the candidate's passes are hypergeometric under "same pass
  rate"; p = P[X <= candidate passes]. Exact at every size: the hypergeometric terms are
  summed from the observed table outward in floating point (each term from the previous
  one by its ratio, the first from ``lgamma``), relative error below 1e-9 up to millions
  of cases (checked against exact integer sums in tests/report/test_two_sample.py).
  Chosen over Boschloo's test, which is uniformly more powerful but needs a maximisation
  over the unknown common pass rate (O(n1 * n2) per grid point, a grid that makes it
  only approximately exact).
  Fisher's test is conservative (its size is below the level), never above it.
- **Power of Fisher's test** (:func:`fisher_min_detectable_drop`): exact, the sum over
  every outcome (x1 baseline passes, x2 candidate passes) of two binomial probabilities
  times "the gate blocks on this table" (Fisher p <= level and the observed drop beyond
  the allowed one).
- **Graded**: a two-sample permutation test on the means, one-sided
  (:func:`two_sample_permutation`). Under "same distribution" every split of the pooled
  case values into groups of the two sizes is equally likely; p is the share of splits
  whose candidate sum is as low as observed or lower. Chosen over Mann-Whitney because it
  tests the quantity the gate reports and the allowed drop is written in (the mean), and
  handles the many ties of graded scores (k/4, means over repeats) without a correction.
  Exact (every split enumerated) when there are at most EXACT_SPLITS splits; a seeded
  sequential Monte Carlo (Besag-Clifford, as the paired test) while the smaller sample has
  at most MONTE_CARLO_MAX cases (or the values are too skewed, see SKEW_FACTOR); beyond,
  the normal approximation of the same permutation distribution with its exact mean,
  variance and third cumulant (one Edgeworth term), continuity-corrected by the range of
  the pooled values (the most one swap of cases can move the sum). Its size, enumerated
  exactly on 0/1 values (where the permutation distribution is hypergeometric) for
  samples of 201 to 20,000 cases, is at most the level for every level >= 1e-6 (up to 1.6
  times the level at 1e-8); tests/report/test_two_sample.py enumerates five of them.
  Without the skewness term it reached 1.9 times the level at 1e-4.
- **Minimum detectable drop of a graded scorer** (:func:`shift_min_detectable_drop`): the
  normal approximation for a shift of the candidate's values, with the baseline's
  standard deviation: max(allowed, z_level * se) + z_power * se, se = sd * sqrt(1/n1 +
  1/n2). An approximation (the permutation test has no closed-form power), stated as such.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence

from agenteval.summary.stats import SEQUENTIAL_STOP, PermutationResult

EXACT_SPLITS = 20_000
"""Enumerate every split of the pooled values when there are at most this many."""
MONTE_CARLO_MAX = 200
"""Sequential Monte Carlo while the smaller sample has at most this many cases."""
SKEW_FACTOR = 20
"""Beyond MONTE_CARLO_MAX, still Monte Carlo while the pooled values' |skewness| exceeds
sqrt(smaller sample) / SKEW_FACTOR (a few rare high or low values: the normal tail is off)."""
POWER = 0.8
"""The power at which minimum detectable drops are stated."""
_NEGLIGIBLE = 1e-17
"""Stop summing a tail when a term is below this share of the running sum."""


def log_comb(n: int, k: int) -> float:
    """log C(n, k) for 0 <= k <= n."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeom_cdf(k: int, total: int, good: int, draws: int, stop_above: float = math.inf) -> float:
    """P[X <= k] for X the good items among ``draws`` drawn without replacement from
    ``total`` items of which ``good`` are good.

    The tail on the side of ``k`` away from the mode is summed outward from ``k`` (terms
    decrease there), so a small p-value costs a few terms and has a small relative error;
    a ``k`` past the mode goes through the complement 1 - P[X >= k + 1]. With
    ``stop_above``, summing a lower tail stops as soon as its side of ``stop_above`` is
    known (the partial sum exceeds it, or the bound on the rest keeps it below): the result
    is then only on the right side of ``stop_above``, for "is p <= level?".
    """
    if not 0 <= good <= total or not 0 <= draws <= total:
        raise ValueError(f"need 0 <= good, draws <= total, got {good}, {draws}, {total}")
    bad = total - good
    lo, hi = max(0, draws - bad), min(draws, good)
    if k < lo:
        return 0.0
    if k >= hi:
        return 1.0
    mode = (draws + 1) * (good + 1) // (total + 2)

    def log_pmf(j: int) -> float:
        return log_comb(good, j) + log_comb(bad, draws - j) - log_comb(total, draws)

    if k <= mode:
        term = math.exp(log_pmf(k))
        tail, j = term, k
        while j > lo and term > tail * _NEGLIGIBLE and tail <= stop_above:
            ratio = j * (bad - draws + j) / ((good - j + 1) * (draws - j + 1))
            # the ratios fall as j does (log-concave), so the rest is < term * r / (1 - r)
            if ratio < 1 and tail + term * ratio / (1 - ratio) <= stop_above < math.inf:
                break
            term *= ratio
            tail += term
            j -= 1
        return min(1.0, tail)
    term = math.exp(log_pmf(k + 1))
    tail, j = term, k + 1
    while j < hi and term > tail * _NEGLIGIBLE:
        term *= (good - j) * (draws - j) / ((j + 1) * (bad - draws + j + 1))
        tail += term
        j += 1
    return max(0.0, 1.0 - tail)


def fisher_one_sided(
    base_good: int, base_n: int, cand_good: int, cand_n: int, stop_above: float = math.inf
) -> float:
    """One-sided Fisher exact p-value that the candidate's rate of good outcomes (passes,
    answered cases, cases without a failed trial) is lower than the baseline's.

    p = P[X <= cand_good], X hypergeometric: ``cand_n`` cases drawn from the pooled
    ``base_n + cand_n``, of which ``base_good + cand_good`` are good. 1.0 when either
    sample is empty. The smallest possible value, every baseline case good and every
    candidate case not, is 1 / C(base_n + cand_n, cand_n). ``stop_above``: see
    :func:`hypergeom_cdf` (for "is p <= level?" only).
    """
    if not (0 <= base_good <= base_n and 0 <= cand_good <= cand_n):
        raise ValueError("need 0 <= good <= n in both samples")
    if base_n == 0 or cand_n == 0:
        return 1.0
    return hypergeom_cdf(cand_good, base_n + cand_n, base_good + cand_good, cand_n, stop_above)


def best_case_log_p(n1: int, n2: int) -> float:
    """log of the smallest p-value either two-sample test can give on samples of n1 and
    n2 cases (every candidate case below every baseline case): -log C(n1 + n2, n2)."""
    return -log_comb(n1 + n2, n2)


def log_combs(n: int) -> list[float]:
    """log C(n, k) for k = 0..n."""
    lg = math.lgamma(n + 1)
    return [lg - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in range(n + 1)]


def binomial_pmf(n: int, p: float, logc: Sequence[float] | None = None) -> list[float]:
    """P[Binomial(n, p) = k] for k = 0..n (``logc``: :func:`log_combs` of n, if at hand)."""
    if p <= 0.0:
        return [1.0] + [0.0] * n
    if p >= 1.0:
        return [0.0] * n + [1.0]
    lp, lq = math.log(p), math.log1p(-p)
    logc = logc if logc is not None else log_combs(n)
    return [math.exp(logc[k] + k * lp + (n - k) * lq) for k in range(n + 1)]


def fisher_critical(n1: int, n2: int, level: float, allowed: float, x1s: range) -> dict[int, int]:
    """For each baseline pass count x1 in ``x1s``, the largest candidate pass count x2 on
    which the gate blocks (Fisher p <= ``level`` and x1/n1 - x2/n2 > ``allowed``); -1 when
    none does. Both conditions hold for every smaller x2 and keep holding as x1 grows, so
    the boundary is walked once (O(n1 + n2) p-values)."""

    def blocks(x1: int, x2: int) -> bool:
        if x1 / n1 - x2 / n2 <= allowed + 1e-12:
            return False
        return fisher_one_sided(x1, n1, x2, n2, stop_above=level) <= level

    out: dict[int, int] = {}
    if not x1s:
        return out
    first = x1s[0]
    lo, hi = -1, n2  # invariant: blocks(first, lo) (or lo == -1); not blocks(first, hi + 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks(first, mid):
            lo = mid
        else:
            hi = mid - 1
    c = lo
    for x1 in x1s:
        while c + 1 <= n2 and blocks(x1, c + 1):
            c += 1
        out[x1] = c
    return out


def binomial_window(n: int, p: float) -> tuple[int, list[float]]:
    """(lo, P[Binomial(n, p) = k] for k = lo..hi): the k within 12 standard deviations + 40
    of the mean (all the mass but < 1e-30 of it), so large n costs O(sqrt(n))."""
    half = 12 * math.sqrt(n * p * (1 - p)) + 40
    lo, hi = max(0, math.floor(n * p - half)), min(n, math.ceil(n * p + half))
    if p <= 0.0 or p >= 1.0:
        full = binomial_pmf(n, p)
        return lo, full[lo : hi + 1]
    lp, lq, lg = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    return lo, [
        math.exp(lg - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)
        for k in range(lo, hi + 1)
    ]


def fisher_power(
    window1: tuple[int, Sequence[float]], n2: int, p2: float, critical: dict[int, int]
) -> float:
    """P[the gate blocks] when the baseline's passes follow ``window1`` (from
    :func:`binomial_window`, restricted to the keys of ``critical``) and the candidate's are
    Binomial(n2, p2)."""
    lo1, pmf1 = window1
    lo2, pmf2 = binomial_window(n2, p2)
    cdf2 = list(itertools.accumulate(pmf2))
    last = len(cdf2) - 1
    return sum(pmf1[x1 - lo1] * cdf2[min(c - lo2, last)] for x1, c in critical.items() if c >= lo2)


CriticalCache = dict[tuple[int, int, float, float], dict[int, int]]
"""Critical values already computed, by (n1, n2, level, allowed): scorers of one gate
mostly share their sample sizes."""


def fisher_min_detectable_drop(
    n1: int,
    n2: int,
    p1: float,
    level: float,
    allowed: float = 0.0,
    power: float = POWER,
    cache: CriticalCache | None = None,
) -> float | None:
    """The smallest drop d (pass rate p1 in the baseline, p1 - d in the candidate) that the
    gate blocks with probability >= ``power``: Fisher's test at ``level`` with the observed
    drop beyond ``allowed``. Exact up to the bisection's step (p1 / 4096, rounded up, so
    the power at the returned drop is at least ``power``); baseline pass counts with
    probability below 1e-15 are left out. None when not even p1 -> 0 reaches ``power``."""
    if n1 == 0 or n2 == 0 or p1 <= 0.0:
        return None
    window1 = binomial_window(n1, p1)
    lo1, pmf1 = window1
    mass = [lo1 + k for k, v in enumerate(pmf1) if v > 1e-15]
    known = (cache if cache is not None else {}).setdefault((n1, n2, level, allowed), {})
    missing = [x for x in range(mass[0], mass[-1] + 1) if x not in known]
    if missing:
        known.update(fisher_critical(n1, n2, level, allowed, range(missing[0], missing[-1] + 1)))
    critical = {x: known[x] for x in range(mass[0], mass[-1] + 1)}
    if fisher_power(window1, n2, 0.0, critical) < power:
        return None
    lo, hi = 0.0, p1
    for _ in range(12):
        mid = (lo + hi) / 2
        if fisher_power(window1, n2, p1 - mid, critical) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def normal_sf(x: float) -> float:
    """P[Z > x] for a standard normal Z."""
    return 0.5 * math.erfc(x / math.sqrt(2))


def normal_isf(q: float) -> float:
    """The x with P[Z > x] = q, for 0 < q < 1 (bisection; |error| < 1e-12)."""
    if not 0 < q < 1:
        raise ValueError("q must be within (0, 1)")
    lo, hi = -40.0, 40.0
    while hi - lo > 1e-12:
        mid = (lo + hi) / 2
        if normal_sf(mid) > q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def shift_min_detectable_drop(
    n1: int,
    n2: int,
    sd: float,
    baseline_mean: float,
    level: float,
    allowed: float = 0.0,
    power: float = POWER,
) -> float | None:
    """Approximate smallest drop in a graded scorer's mean detected with ``power``: the
    candidate's values shifted down by d, standard deviation ``sd`` in both samples,
    se = sd * sqrt(1/n1 + 1/n2), d = max(allowed, z(level) * se) + z(power) * se. None when
    no split of these sizes can be significant at ``level`` or d exceeds the baseline mean
    (scores cannot go below 0)."""
    if n1 == 0 or n2 == 0 or best_case_log_p(n1, n2) > math.log(level):
        return None
    se = sd * math.sqrt(1 / n1 + 1 / n2)
    d = max(allowed, normal_isf(level) * se) + normal_isf(1 - power) * se
    return d if d <= baseline_mean else None


def _extreme_count_exact(pooled: list[float], m: int, small_is_cand: bool, obs: float) -> int:
    total = sum(pooled)
    tol = 1e-12 * max(1.0, sum(abs(v) for v in pooled))
    count = 0
    for combo in itertools.combinations(pooled, m):
        s = sum(combo)
        cand_sum = s if small_is_cand else total - s
        count += cand_sum <= obs + tol
    return count


def two_sample_permutation(
    base: Sequence[float],
    cand: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = 4000,
) -> PermutationResult:
    """One-sided permutation p-value that the candidate's mean is lower than the
    baseline's (statistic: the candidate's sum, as low as observed or lower). See the
    module docstring for when it is exact, Monte Carlo (seeded by ``seed``; at most
    ``resamples`` draws) or normal. 1.0 when a sample is empty or all values are equal."""
    n1, n2 = len(base), len(cand)
    if n1 == 0 or n2 == 0:
        return PermutationResult(1.0, "exact")
    pooled = [float(v) for v in (*base, *cand)]
    if max(pooled) == min(pooled):
        return PermutationResult(1.0, "exact")
    obs = float(sum(cand))
    m, small_is_cand = (n2, True) if n2 <= n1 else (n1, False)
    total_n = n1 + n2
    if log_comb(total_n, m) <= math.log(EXACT_SPLITS + 0.5):
        count = _extreme_count_exact(pooled, m, small_is_cand, obs)
        return PermutationResult(min(1.0, count / math.comb(total_n, m)), "exact")
    total = sum(pooled)
    tol = 1e-12 * max(1.0, sum(abs(v) for v in pooled))
    if m <= MONTE_CARLO_MAX or _skewness(pooled) > math.sqrt(m) / SKEW_FACTOR:

        def extreme(s: float) -> bool:
            return (s if small_is_cand else total - s) <= obs + tol

        p = _sequential_mc(pooled, m, extreme, seed, resamples)
        return PermutationResult(p, "monte_carlo")
    return PermutationResult(edgeworth_lower_tail(obs, split_moments(pooled, n2)), "normal")


def _skewness(values: Sequence[float]) -> float:
    """|skewness| of ``values`` (their third central moment over the variance ** 1.5)."""
    n = len(values)
    mean = sum(values) / n
    m2 = sum((v - mean) ** 2 for v in values) / n
    m3 = sum((v - mean) ** 3 for v in values) / n
    return abs(m3) / (m2 * math.sqrt(m2)) if m2 > 0 else 0.0


def split_moments(pooled: Sequence[float], n2: int) -> tuple[float, float, float, float]:
    """(mean, variance, skewness) of the sum of ``n2`` values drawn without replacement
    from ``pooled`` (exact: the sample total's first three cumulants), and the range of the
    values (the most one swap of cases can move that sum)."""
    big_n = len(pooled)
    mean = sum(pooled) / big_n
    mu2 = sum((v - mean) ** 2 for v in pooled) / big_n
    mu3 = sum((v - mean) ** 3 for v in pooled) / big_n
    var = n2 * (big_n - n2) / (big_n - 1) * mu2
    k3 = n2 * (big_n - n2) * (big_n - 2 * n2) / ((big_n - 1) * (big_n - 2)) * mu3
    return n2 * mean, var, k3 / (var * math.sqrt(var)), max(pooled) - min(pooled)


def edgeworth_lower_tail(obs: float, moments: tuple[float, float, float, float]) -> float:
    """P[sum <= obs] by the normal approximation with one Edgeworth term for the skewness,
    continuity-corrected by the values' range (``moments``: :func:`split_moments`)."""
    mean, var, skew, step = moments
    z = (obs - mean + step) / math.sqrt(var)
    phi = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    return max(0.0, min(1.0, normal_sf(-z) - skew / 6 * (z * z - 1) * phi))


def _sequential_mc(
    pooled: list[float], m: int, extreme: Callable[[float], bool], seed: int, resamples: int
) -> float:
    """Besag-Clifford sequential Monte Carlo over random splits: stop at the
    SEQUENTIAL_STOP-th split as extreme as observed (after L draws, p = SEQUENTIAL_STOP /
    L); otherwise, with k such splits in ``resamples``, p = (k + 1) / (resamples + 1)."""
    rng = random.Random(seed)
    rand = rng.random
    values = list(pooled)
    n = len(values)
    count = 0
    for drawn in range(1, resamples + 1):
        # a partial Fisher-Yates shuffle: values[:m] is a uniformly random m-subset
        s = 0.0
        for i in range(m):
            j = i + int(rand() * (n - i))
            values[i], values[j] = values[j], values[i]
            s += values[i]
        if extreme(s):
            count += 1
            if count == SEQUENTIAL_STOP:
                return SEQUENTIAL_STOP / drawn
    return (count + 1) / (resamples + 1)
