"""Statistics: known values and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.report import stats


def test_wilson_known_values() -> None:
    lo, hi = stats.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = stats.wilson_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        stats.wilson_interval(3, 2)


@given(st.integers(0, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_point_estimate(sn: tuple[int, int]) -> None:
    s, n = sn
    lo, hi = stats.wilson_interval(s, n)
    assert 0.0 <= lo <= hi <= 1.0
    if n:
        assert lo <= s / n <= hi


def test_mcnemar_known_values() -> None:
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert stats.mcnemar_exact(1, 0) == 1.0
    # 0 vs 20 discordant pairs: very significant
    assert stats.mcnemar_exact(20, 0) < 1e-5


@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_is_symmetric_and_a_probability(b: int, c: int) -> None:
    p = stats.mcnemar_exact(b, c)
    assert 0.0 <= p <= 1.0
    assert p == stats.mcnemar_exact(c, b)


@given(st.integers(0, 200), st.integers(0, 200))
def test_mcnemar_more_extreme_is_more_significant(b: int, c: int) -> None:
    if b < c:
        assert stats.mcnemar_exact(b, c + 1) <= stats.mcnemar_exact(b, c)


def test_permutation_exact_small() -> None:
    # three equal positive differences: only all-plus and all-minus are as extreme
    r = stats.paired_permutation([1.0, 1.0, 1.0, 0.0])
    assert r.method == "exact" and r.p_value == pytest.approx(2 / 8)
    assert stats.paired_permutation([0.0, 0.0]).p_value == 1.0


def test_permutation_methods_by_size() -> None:
    assert stats.paired_permutation([0.1] * 20, seed=1).method == "monte_carlo"
    big = stats.paired_permutation([-0.1] * 150 + [0.1] * 50 + [-0.05] * 300)
    assert big.method == "normal" and big.p_value < 1e-6


def test_permutation_is_seeded() -> None:
    diffs = [0.1, -0.2, 0.3, 0.05, -0.1] * 8
    a = stats.paired_permutation(diffs, seed=3)
    b = stats.paired_permutation(diffs, seed=3)
    assert a == b


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), max_size=24), st.integers(0, 10))
def test_permutation_p_value_in_unit_interval_and_sign_invariant(
    diffs: list[float], seed: int
) -> None:
    r = stats.paired_permutation(diffs, seed=seed)
    assert 0.0 <= r.p_value <= 1.0
    if r.method == "exact":  # flipping every sign gives the same distribution
        assert stats.paired_permutation([-d for d in diffs]).p_value == pytest.approx(r.p_value)


def test_pass_at_k_and_pass_hat_k() -> None:
    assert stats.pass_at_k(5, 0, 1) == 0.0
    assert stats.pass_at_k(5, 5, 3) == 1.0
    assert stats.pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert stats.pass_at_k(4, 2, 3) == 1.0  # any 3 of 4 include a success
    assert stats.pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert stats.pass_hat_k(3, 3, 3) == 1.0
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 4, 1)


@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_k_bounds(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    at, hat = stats.pass_at_k(n, c, k), stats.pass_hat_k(n, c, k)
    assert 0.0 <= hat <= c / n + 1e-9
    assert c / n <= at + 1e-9 <= 1.0 + 2e-9


def test_percentile_and_t_quantile() -> None:
    assert stats.percentile([], 50) is None
    assert stats.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert stats.percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert stats.t_quantile_975(1) == pytest.approx(12.706)
    assert stats.t_quantile_975(31) == pytest.approx(2.0395, abs=1e-3)
    assert stats.t_quantile_975(10_000) == pytest.approx(1.96, abs=1e-3)
    ci = stats.mean_interval(4, 0.5, 1.0)
    assert ci is not None and ci[0] == 0.0 and ci[1] == 1.0
    assert stats.mean_interval(1, 0.5, 0.0) is None


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=60))
def test_mean_interval_contains_mean(values: list[float]) -> None:
    n = len(values)
    mean = sum(values) / n
    m2 = sum((v - mean) ** 2 for v in values)
    ci = stats.mean_interval(n, mean, m2)
    assert ci is not None
    assert 0.0 <= ci[0] <= mean + 1e-12 and mean - 1e-12 <= ci[1] <= 1.0
    assert not math.isnan(ci[0])
