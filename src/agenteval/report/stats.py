"""Statistics used by reports and the gate, with no third-party dependency.

- Pass rates get a **Wilson score interval** (95% by default): it stays inside [0, 1] and
  behaves at 0/n and n/n, unlike the normal approximation.
- Means get a **Student t-interval** (95%), computed from streaming moments (n, mean,
  sum of squared deviations), clipped to [0, 1] since scores live there.
- Paired pass/fail comparisons use the **exact McNemar test**: a two-sided binomial test
  on the discordant pairs (b cases passed only in one run, c only in the other).
- Paired graded comparisons use a **sign-flip permutation test** on the per-case
  differences, two-sided: exact enumeration when at most 16 differences are non-zero, a
  seeded Monte Carlo (4,000 resamples) up to 200, and beyond that the normal approximation
  of the same permutation distribution (its variance is exactly the sum of squares).
- Repeats: ``pass_at_k`` is the unbiased estimator 1 - C(n-c, k) / C(n, k); ``pass_hat_k``
  (pass^k, all k attempts succeed) is C(c, k) / C(n, k).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

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


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``.

    Returns (0.0, 1.0) when ``n`` is 0 (no information). Always contains successes / n.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
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
    tail = sum(math.comb(n, i) for i in range(k + 1))
    p: float = 2 * tail / 2**n
    return min(1.0, p)


def _normal_sf(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2))


@dataclass(frozen=True, slots=True)
class PermutationResult:
    """A p-value and how it was obtained (exact, monte_carlo or normal)."""

    p_value: float
    method: str


def paired_permutation(diffs: Sequence[float], *, seed: int = 0) -> PermutationResult:
    """Two-sided sign-flip permutation test that the mean paired difference is 0.

    The statistic is |sum of differences|; under the null each difference's sign is a fair
    coin. Zero differences do not change the statistic. See the module docstring for when
    the result is exact, Monte Carlo (seeded by ``seed``, p = (k + 1) / (R + 1)) or normal.
    """
    nz = [float(d) for d in diffs if d != 0]
    m = len(nz)
    if m == 0:
        return PermutationResult(1.0, "exact")
    observed = abs(sum(nz)) - 1e-12 * max(1.0, sum(abs(d) for d in nz))
    if m <= EXACT_MAX:
        count = 0
        for mask in range(1 << m):
            s = 0.0
            for i, d in enumerate(nz):
                s += -d if mask >> i & 1 else d
            if abs(s) >= observed:
                count += 1
        return PermutationResult(count / (1 << m), "exact")
    if m <= MONTE_CARLO_MAX:
        rng = random.Random(seed)
        count = 0
        for _ in range(MONTE_CARLO_RESAMPLES):
            bits = rng.getrandbits(m)
            s = 0.0
            for i, d in enumerate(nz):
                s += -d if bits >> i & 1 else d
            if abs(s) >= observed:
                count += 1
        return PermutationResult((count + 1) / (MONTE_CARLO_RESAMPLES + 1), "monte_carlo")
    sd = math.sqrt(sum(d * d for d in nz))
    return PermutationResult(min(1.0, 2 * _normal_sf(abs(sum(nz)) / sd)), "normal")


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
