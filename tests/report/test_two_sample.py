"""The unpaired gate's statistics against values computed independently: exact integer
sums, exhaustive enumeration of splits, hand-computed textbook values, brute-force power."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.gate import two_sample as ts


def exact_fisher(bg: int, bn: int, cg: int, cn: int) -> Fraction:
    """P[X <= cg] by exact integer sums (X: good cases among the candidate's cn)."""
    good, total = bg + cg, bn + cn
    num = sum(
        math.comb(good, j) * math.comb(total - good, cn - j)
        for j in range(0, cg + 1)
        if j <= good and cn - j <= total - good
    )
    return Fraction(num, math.comb(total, cn))


def test_fisher_lady_tasting_tea() -> None:
    # Fisher's own example: 4 of 8 cups, 3 picked right: one-sided p = 17/70
    assert ts.fisher_one_sided(3, 4, 1, 4) == pytest.approx(17 / 70, rel=1e-14)
    # all right: 1 / C(8, 4) = 1/70, the smallest p on these sizes
    assert ts.fisher_one_sided(4, 4, 0, 4) == pytest.approx(1 / 70, rel=1e-14)
    assert math.exp(ts.best_case_log_p(4, 4)) == pytest.approx(1 / 70)


def test_fisher_equals_exact_integer_sums_on_every_small_table() -> None:
    for bn, cn in itertools.product(range(1, 10), repeat=2):
        for bg in range(bn + 1):
            for cg in range(cn + 1):
                exact = float(exact_fisher(bg, bn, cg, cn))
                assert ts.fisher_one_sided(bg, bn, cg, cn) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(
    "table", [(180, 200, 160, 200), (900, 1000, 850, 1000), (1000, 1500, 400, 700), (3, 900, 0, 50)]
)
def test_fisher_on_large_tables_matches_exact_sums(table: tuple[int, int, int, int]) -> None:
    assert ts.fisher_one_sided(*table) == pytest.approx(float(exact_fisher(*table)), rel=1e-10)


@settings(max_examples=200, deadline=None)
@given(
    bn=st.integers(1, 300),
    cn=st.integers(1, 300),
    fb=st.floats(0, 1),
    fc=st.floats(0, 1),
)
def test_fisher_p_is_a_probability_and_monotone_in_the_effect(
    bn: int, cn: int, fb: float, fc: float
) -> None:
    bg, cg = round(fb * bn), round(fc * cn)
    p = ts.fisher_one_sided(bg, bn, cg, cn)
    assert 0.0 <= p <= 1.0
    if cg > 0:  # one fewer candidate pass: at least as significant
        assert ts.fisher_one_sided(bg, bn, cg - 1, cn) <= p + 1e-12
    if bg < bn:  # one more baseline pass: at least as significant
        assert ts.fisher_one_sided(bg + 1, bn, cg, cn) <= p + 1e-12


def brute_permutation(base: list[float], cand: list[float]) -> Fraction:
    """Share of all splits whose candidate sum is <= the observed one (by index)."""
    pooled = base + cand
    obs = sum(cand)
    splits = list(itertools.combinations(range(len(pooled)), len(cand)))
    hits = sum(sum(pooled[i] for i in idx) <= obs + 1e-9 for idx in splits)
    return Fraction(hits, len(splits))


def test_permutation_hand_computed() -> None:
    # candidate [0] against [1, 2, 3]: only the split putting 0 in the candidate is as low
    r = ts.two_sample_permutation([1, 2, 3], [0])
    assert r.method == "exact" and r.p_value == pytest.approx(1 / 4)
    # ties count as extreme: [0.5] vs [0.5, 1]: 2 of 3 splits have a candidate sum <= 0.5
    assert ts.two_sample_permutation([0.5, 1.0], [0.5]).p_value == pytest.approx(2 / 3)
    assert ts.two_sample_permutation([0.7] * 5, [0.7] * 4).p_value == 1.0


def test_permutation_exact_path_equals_brute_force() -> None:
    rng = random.Random(5)
    for _ in range(60):
        n1, n2 = rng.randint(1, 8), rng.randint(1, 8)
        base = [rng.choice([0, 0.25, 0.5, 0.75, 1]) for _ in range(n1)]
        cand = [rng.choice([0, 0.25, 0.5, 0.75, 1]) for _ in range(n2)]
        r = ts.two_sample_permutation(base, cand)
        assert r.method == "exact"
        assert r.p_value == pytest.approx(float(brute_permutation(base, cand)), rel=1e-12)


def test_permutation_monte_carlo_and_normal_agree_with_fisher_on_zero_one_values() -> None:
    # on 0/1 values the permutation distribution of the candidate's sum is hypergeometric,
    # so Fisher's p is the exact permutation p-value
    base, cand = [1.0] * 45 + [0.0] * 15, [1.0] * 33 + [0.0] * 27
    runs = [ts.two_sample_permutation(base, cand, seed=s) for s in range(20)]
    exact = ts.fisher_one_sided(45, 60, 33, 60)
    assert {r.method for r in runs} == {"monte_carlo"}
    # one sequential estimate stops at its 40th extreme split (relative sd ~ 1/sqrt(40));
    # the mean of 20 seeds is within 10%
    assert sum(r.p_value for r in runs) / 20 == pytest.approx(exact, rel=0.1)
    base, cand = [1.0] * 300 + [0.0] * 200, [1.0] * 260 + [0.0] * 240
    r = ts.two_sample_permutation(base, cand)
    exact = ts.fisher_one_sided(300, 500, 260, 500)
    assert r.method == "normal" and exact < r.p_value < 1.5 * exact  # continuity: a bit above


def _normal_size(n1: int, n2: int, good: int, level: float) -> float:
    """Exact chance, over random splits of ``good`` ones and zeros, that the normal path
    rejects at ``level`` (the permutation distribution is hypergeometric)."""
    total = n1 + n2
    pooled = [1.0] * good + [0.0] * (total - good)
    moments = ts.split_moments(pooled, n2)
    size = 0.0
    for t in range(max(0, good - n1), min(good, n2) + 1):  # t: ones in the candidate
        if ts.edgeworth_lower_tail(t, moments) <= level:
            size += math.exp(
                ts.log_comb(good, t) + ts.log_comb(total - good, n2 - t) - ts.log_comb(total, n2)
            )
    return size


@pytest.mark.parametrize(
    ("n1", "n2", "good"),
    [(201, 201, 100), (1000, 250, 625), (250, 1000, 625), (2000, 2000, 1000), (300, 5000, 2650)],
)
def test_normal_path_rejects_no_more_often_than_the_level(n1: int, n2: int, good: int) -> None:
    for level in (0.05, 0.01, 0.05 / 16, 1e-3, 1e-4, 1e-6):
        assert _normal_size(n1, n2, good, level) <= level


def test_skewed_values_go_to_monte_carlo_not_the_normal_tail() -> None:
    # three rare high values among 5,300: the normal tail was up to 1.9x the level here
    base, cand = [0.0] * 297 + [1.0] * 3, [0.0] * 5000
    assert ts.two_sample_permutation(base, cand, resamples=200).method == "monte_carlo"


@settings(max_examples=60, deadline=None)
@given(
    base=st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=7),
    cand=st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=7),
    shift=st.sampled_from([0.25, 0.5]),
)
def test_permutation_p_is_a_probability_and_monotone_in_a_drop(
    base: list[float], cand: list[float], shift: float
) -> None:
    p = ts.two_sample_permutation(base, cand).p_value
    assert 0.0 < p <= 1.0
    lower = [max(0.0, v - shift) for v in cand]
    assert ts.two_sample_permutation(base, lower).p_value <= p + 1e-12


def brute_power(n1: int, n2: int, p1: float, p2: float, level: float, allowed: float) -> float:
    """P[Fisher p <= level and the observed drop > allowed], summed over every table."""
    pmf1, pmf2 = ts.binomial_pmf(n1, p1), ts.binomial_pmf(n2, p2)
    return sum(
        pmf1[x1] * pmf2[x2]
        for x1 in range(n1 + 1)
        for x2 in range(n2 + 1)
        if x1 / n1 - x2 / n2 > allowed + 1e-12 and ts.fisher_one_sided(x1, n1, x2, n2) <= level
    )


@pytest.mark.parametrize(
    ("n1", "n2", "p1", "allowed"), [(30, 30, 0.8, 0.0), (25, 40, 0.9, 0.05), (40, 20, 0.6, 0.0)]
)
def test_min_detectable_drop_has_the_stated_power_by_brute_force(
    n1: int, n2: int, p1: float, allowed: float
) -> None:
    level = 0.05 / 3
    d = ts.fisher_min_detectable_drop(n1, n2, p1, level, allowed)
    assert d is not None and allowed < d <= p1
    assert brute_power(n1, n2, p1, p1 - d, level, allowed) >= ts.POWER
    step = p1 / 4096
    assert brute_power(n1, n2, p1, p1 - d + 2 * step, level, allowed) < ts.POWER


def test_min_detectable_drop_is_none_when_even_a_drop_to_zero_is_too_weak() -> None:
    # 5 vs 5 cases at 90%: (5/5 vs 0/5) is significant at 0.0167 but (4/5 vs 0/5) is not,
    # so the power of a drop to 0 is P[5 of 5 passed] = 0.59 < 0.8
    assert ts.fisher_min_detectable_drop(5, 5, 0.9, 0.05 / 3) is None
    assert brute_power(5, 5, 0.9, 0.0, 0.05 / 3, 0.0) == pytest.approx(0.9**5)
    assert ts.fisher_min_detectable_drop(10, 10, 0.0, 0.05) is None  # nothing can drop


def test_shift_min_detectable_drop_hand_computed() -> None:
    # sd 0.3, 200 and 200 cases, level 0.05/14: se = 0.03, z = 2.6901, z(80%) = 0.8416
    d = ts.shift_min_detectable_drop(200, 200, 0.3, 0.7, 0.05 / 14)
    assert d == pytest.approx((2.690110 + 0.841621) * 0.03, rel=1e-5)
    # an allowed drop larger than the critical drop: allowed + z(80%) * se
    d = ts.shift_min_detectable_drop(200, 200, 0.3, 0.7, 0.05 / 14, allowed=0.2)
    assert d == pytest.approx(0.2 + 0.841621 * 0.03, rel=1e-5)
    assert ts.shift_min_detectable_drop(200, 200, 0.3, 0.05, 0.05 / 14) is None  # below 0
    assert ts.shift_min_detectable_drop(2, 2, 0.3, 0.7, 0.05 / 3) is None  # 1/C(4,2) > level


def test_normal_quantiles() -> None:
    assert ts.normal_isf(0.025) == pytest.approx(1.959963984540054, abs=1e-9)
    assert ts.normal_isf(0.2) == pytest.approx(0.8416212335729143, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(
    bn=st.integers(1, 3000),
    cn=st.integers(1, 3000),
    fb=st.floats(0, 1),
    fc=st.floats(0, 1),
    level=st.sampled_from([0.05, 0.05 / 14, 1e-4]),
)
def test_stopping_early_never_changes_which_side_of_the_level_p_is_on(
    bn: int, cn: int, fb: float, fc: float, level: float
) -> None:
    bg, cg = round(fb * bn), round(fc * cn)
    full = ts.fisher_one_sided(bg, bn, cg, cn)
    assert (ts.fisher_one_sided(bg, bn, cg, cn, stop_above=level) <= level) == (full <= level)
