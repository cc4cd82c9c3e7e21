"""Statistics used by reports and the gate, with no third-party dependency.

- Pass rates get a **Wilson score interval** (95% by default): it stays inside [0, 1] and
  behaves at 0/n and n/n, unlike the normal approximation.
- Means get a **Student t-interval** (95%), computed from streaming moments (n, mean,
  sum of squared deviations), clipped to [0, 1] since scores live there.
- With repeats, intervals are **clustered by case** (:func:`clustered_pass_rate_interval`,
  :func:`clustered_mean_interval`): the point estimate stays the trial-level rate or mean,
  but its variance is the cluster-robust (case-level) one, so k identical repeats give
  exactly the interval of one trial per case.
- Paired pass/fail comparisons use the **exact McNemar test**: a binomial test on the
  discordant pairs (b cases passed only in one run, c only in the other); two-sided
  (:func:`mcnemar_exact`) or one-sided (:func:`mcnemar_one_sided`, what the gate uses).
- Paired graded comparisons use a **sign-flip permutation test** on the per-case
  differences (two-sided, or one-sided with ``alternative="less"``): exact enumeration when
  at most 16 differences are non-zero, a seeded sequential Monte Carlo up to 200 (Besag and
  Clifford 1991: stop after 40 resamples as extreme as the observed one, at most 4,000
  or ``resamples``), and beyond that the normal approximation of the same permutation
  distribution (its variance is exactly the sum of squares), continuity-corrected by the
  largest absolute difference so that it does not reject more often than the level.
- Several tests at once are corrected with **Holm's step-down** adjustment (:func:`holm`).
- Repeats: ``pass_at_k`` is the unbiased estimator 1 - C(n-c, k) / C(n, k); ``pass_hat_k``
  (pass^k, all k attempts succeed) is C(c, k) / C(n, k).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Z95 = 1.959963984540054
"""Two-sided 95% standard normal quantile."""

_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
"""97.5% quantiles of Student's t for 1..30 degrees of freedom."""

EXACT_MAX = 16
MONTE_CARLO_MAX = 200
MONTE_CARLO_RESAMPLES = 4000
SEQUENTIAL_STOP = 40
"""The sequential Monte Carlo stops once this many resamples were as extreme as observed."""


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``.

    Returns (0.0, 1.0) when ``n`` is 0 (no information). Always contains successes / n.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    return _wilson(successes / n, n, z)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson interval for an observed proportion ``p`` on a (possibly effective) ``n``."""
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    # guard the point estimate against floating-point rounding at the edges
    return (min(lo, p), max(hi, p))


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` >= 1 degrees of freedom.

    Tabulated up to 30; beyond, the Cornish-Fisher expansion (error < 1e-4).
    """
    if df < 1:
        raise ValueError("df must be >= 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


def mean_interval(n: int, mean: float, m2: float) -> tuple[float, float] | None:
    """95% t-interval for a mean from streaming moments, clipped to [0, 1].

    ``m2`` is the sum of squared deviations from the mean (Welford). None when n < 2.
    """
    if n < 2:
        return None
    sd = math.sqrt(max(m2, 0.0) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    return (max(0.0, min(mean, mean - half)), min(1.0, max(mean, mean + half)))


def clustered_pass_rate_interval(
    clusters: Sequence[tuple[int, int]], z: float = Z95
) -> tuple[float, float]:
    """Wilson interval for a pass rate over trials clustered by case.

    ``clusters`` holds ``(passed, trials)`` per case. The point estimate is the trial-level
    rate p = sum(passed) / N (N = sum of trials). Its cluster-robust variance is
    V = sum((passed_i - p * trials_i) ** 2) / N ** 2, and the interval is Wilson's on the
    effective sample size n_eff = p (1 - p) / V, capped at N (so repeats never narrow it
    below the independent-trials interval). When every case passed or failed every trial
    (p is 0 or 1, or V is 0) n_eff is the number of cases. With one trial per case this is
    exactly :func:`wilson_interval`; with k identical repeats per case it is the interval
    of one trial per case.
    """
    cases = [(s, t) for s, t in clusters if t > 0]
    big_n = sum(t for _, t in cases)
    if big_n == 0:
        return (0.0, 1.0)
    passed = sum(s for s, _ in cases)
    if not 0 <= passed <= big_n:
        raise ValueError("need 0 <= passed <= trials in every case")
    p = passed / big_n
    v = sum((s - p * t) ** 2 for s, t in cases) / big_n**2
    n_eff = float(len(cases)) if v <= 0 or p in (0.0, 1.0) else min(p * (1 - p) / v, big_n)
    lo, hi = _wilson(p, n_eff, z)
    return (min(lo, p), max(hi, p))


def clustered_mean_interval(clusters: Sequence[tuple[int, float]]) -> tuple[float, float] | None:
    """95% t-interval for a mean over values clustered by case, clipped to [0, 1].

    ``clusters`` holds ``(values, sum of values)`` per case. The point estimate is the
    trial-level mean m = sum / N; its standard error is the cluster-robust one,
    se^2 = C / (C - 1) * sum((sum_i - m * values_i) ** 2) / N ** 2 over the C cases, with
    C - 1 degrees of freedom. With one value per case this is exactly
    :func:`mean_interval`; k identical repeats per case give the one-value-per-case
    interval. None with fewer than 2 cases.
    """
    cases = [(k, t) for k, t in clusters if k > 0]
    c = len(cases)
    if c < 2:
        return None
    big_n = sum(k for k, _ in cases)
    mean = sum(t for _, t in cases) / big_n
    v = c / (c - 1) * sum((t - mean * k) ** 2 for k, t in cases) / big_n**2
    half = t_quantile_975(c - 1) * math.sqrt(max(v, 0.0))
    return (max(0.0, min(mean, mean - half)), min(1.0, max(mean, mean + half)))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Under the null each discordant pair goes either way with probability 1/2, so the
    p-value is min(1, 2 * P[Binomial(b + c, 1/2) <= min(b, c)]). 1.0 when b + c == 0.
    Symmetric in b and c.
    """
    if b < 0 or c < 0:
        raise ValueError("counts must be >= 0")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    # P[X <= k] = P[X >= n - k] by symmetry
    return min(1.0, 2 * binomial_half_tail(n, n - k))


def mcnemar_one_sided(worse: int, better: int) -> float:
    """One-sided exact McNemar p-value that discordant pairs lean to ``worse``.

    ``worse`` cases went the tested way (e.g. passed in the baseline, fail in the
    candidate), ``better`` the other way. p = P[Binomial(worse + better, 1/2) >= worse];
    1.0 when there is no discordant pair. The smallest possible value on n discordant
    pairs is 2 ** -n (every one went the tested way).
    """
    if worse < 0 or better < 0:
        raise ValueError("counts must be >= 0")
    n = worse + better
    if n == 0 or worse == 0:
        return 1.0
    return min(1.0, binomial_half_tail(n, worse))


EXACT_TAIL_MAX = 1000
"""Up to this many trials the binomial tail is an exact sum of integers."""


def binomial_half_tail(n: int, k: int) -> float:
    """P[Binomial(n, 1/2) >= k] (1.0 for k <= 0, 0.0 for k > n).

    Up to EXACT_TAIL_MAX trials, the exact integer sum, correctly rounded. Beyond it (the
    sum of n big binomial coefficients took seconds: 5 s at n = 10,000), the terms are
    summed outward from k while they are decreasing, and stopped when the rest cannot
    change the result by 2 ** -80 of it; for k <= n / 2 through the complement
    1 - P[X >= n - k + 1]. Either way within a few units in the last place of the exact
    value (relative error < 2e-16 measured at n = 1,001-2,500); 6 ms at n = 10,000,
    0.3 s at 100,000.
    """
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if n <= EXACT_TAIL_MAX:
        # the same integer sum as sum(math.comb(n, i) ...), each term from the one before:
        # 330x faster at n = 1,000 (20 tails: 4.5 s -> 0.014 s; the gate's cannot-tell
        # search calls this thousands of times)
        term = total = math.comb(n, k)
        for i in range(k, n):
            term = term * (n - i) // (i + 1)  # C(n, i + 1), exact
            total += term
        exact: float = total / (1 << n)
        return exact
    if 2 * k <= n:
        return 1.0 - binomial_half_tail(n, n - k + 1)
    term = math.comb(n, k)
    tail = 0
    for i in range(k, n + 1):
        tail += term
        term = term * (n - i) // (i + 1)  # C(n, i + 1)
        if term * (n - i) < tail >> 80:  # the rest, < term * (n - i), is negligible
            break
    p: float = tail / (1 << n)
    return p


def min_discordant_to_reject(level: float) -> int:
    """The fewest discordant cases that can give a one-sided exact p <= ``level``.

    Both one-sided tests used by the gate reach their smallest p-value, 2 ** -n, when all
    n changed cases changed the tested way; so this is the smallest n with 2 ** -n <= level.
    """
    if not 0 < level <= 1:
        raise ValueError("level must be within (0, 1]")
    n = 0
    while 2.0**-n > level:
        n += 1
    return n


def _normal_sf(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2))


@dataclass(frozen=True, slots=True)
class PermutationResult:
    """A p-value and how it was obtained (exact, monte_carlo or normal)."""

    p_value: float
    method: str


Alternative = Literal["two-sided", "less", "greater"]


def _subset_sums(values: Sequence[float]) -> list[float]:
    """All 2**len sums; bit j of the index says whether values[j] is included."""
    sums = [0.0]
    for v in values:
        sums += [s + v for s in sums]
    return sums


def paired_permutation(
    diffs: Sequence[float],
    *,
    seed: int = 0,
    alternative: Alternative = "two-sided",
    resamples: int = MONTE_CARLO_RESAMPLES,
) -> PermutationResult:
    """Sign-flip permutation test that the mean paired difference is 0.

    Under the null each difference's sign is a fair coin; zero differences do not change
    the statistic. The statistic is the sum of the differences: ``"two-sided"`` counts sign
    flips with |sum| >= |observed|, ``"less"`` those with sum <= observed (evidence that the
    differences are negative), ``"greater"`` those with sum >= observed. See the module
    docstring for when the result is exact, Monte Carlo (seeded by ``seed``; at most
    ``resamples`` draws) or normal. On m non-zero differences that all have the tested
    sign, the exact p-value is 2 ** -m (one-sided).
    """
    nz = [float(d) for d in diffs if d != 0]
    if alternative == "greater":
        nz = [-d for d in nz]
        alternative = "less"
    m = len(nz)
    if m == 0:
        return PermutationResult(1.0, "exact")
    total = sum(nz)
    tol = 1e-12 * max(1.0, sum(abs(d) for d in nz))
    two = alternative == "two-sided"

    def extreme(s: float) -> bool:
        return abs(s) >= abs(total) - tol if two else s <= total + tol

    if two and abs(total) <= tol:
        return PermutationResult(1.0, "exact")  # every sign flip is as extreme
    if m <= EXACT_MAX:
        # meet in the middle: the sign-flipped sum is total - 2 * (sum of flipped values)
        left, right = _subset_sums(nz[: m // 2]), sorted(_subset_sums(nz[m // 2 :]))
        count = 0
        for a in left:
            # flipped sum = total - 2 (a + b); extreme when it is <= total (+tol) etc.
            if two:
                hi = (total - abs(total) + tol) / 2 - a  # total - 2x >= |total| - tol
                lo = (total + abs(total) - tol) / 2 - a  # total - 2x <= -|total| + tol
                count += bisect.bisect_right(right, hi)
                count += len(right) - bisect.bisect_left(right, lo)
            else:
                count += len(right) - bisect.bisect_left(right, -tol / 2 - a)
        return PermutationResult(min(1.0, count / (1 << m)), "exact")
    if m <= MONTE_CARLO_MAX:
        return PermutationResult(_sequential_mc(nz, total, extreme, seed, resamples), "monte_carlo")
    # continuity correction by the largest |difference|: without it the normal tail is
    # too small for sums of a few dominant (or many equal) differences (up to 1.9x, resp.
    # 1.2x the level at m = 201); with it the size stays <= the level (tests/reliability/
    # test_attack_gate.py enumerates both)
    sd = math.sqrt(sum(d * d for d in nz))
    step = max(abs(d) for d in nz)
    z = (abs(total) - step) / sd if two else (total + step) / sd
    p = 2 * _normal_sf(max(z, 0.0)) if two else _normal_sf(-z)
    return PermutationResult(min(1.0, p), "normal")


def _sequential_mc(
    nz: list[float], total: float, extreme: Callable[[float], bool], seed: int, resamples: int
) -> float:
    """Besag-Clifford sequential Monte Carlo p-value (valid at every level).

    Draws up to ``resamples`` random sign flips; stops at the SEQUENTIAL_STOP-th one as
    extreme as observed (after L draws: p = SEQUENTIAL_STOP / L); otherwise, with k such
    draws, p = (k + 1) / (resamples + 1).
    """
    rng = random.Random(seed)
    m = len(nz)
    tables = [_subset_sums(nz[i : i + 8]) for i in range(0, m, 8)]
    count = 0
    for drawn in range(1, resamples + 1):
        bits = rng.getrandbits(m)
        flipped = 0.0
        for table in tables:
            flipped += table[bits & 255]
            bits >>= 8
        if extreme(total - 2 * flipped):
            count += 1
            if count == SEQUENTIAL_STOP:
                return SEQUENTIAL_STOP / drawn
    return (count + 1) / (resamples + 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order.

    With the m p-values sorted ascending, the i-th (1-based) gets
    max over j <= i of min(1, (m - j + 1) * p_(j)). Rejecting every hypothesis whose
    adjusted p-value is <= alpha keeps the family-wise error rate <= alpha under any
    dependence between the tests.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation; None for no values.

    ``sorted_values`` must be sorted ascending.
    """
    n = len(sorted_values)
    if n == 0:
        return None
    if not 0 <= q <= 100:
        raise ValueError("q must be within [0, 100]")
    pos = (n - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: chance that at least one of k of the n attempts (c correct) passed."""
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: chance that k attempts drawn from the n (c correct) all passed."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
