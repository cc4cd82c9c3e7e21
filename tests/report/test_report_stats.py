"""Statistics: known values and properties."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from _runbuild import TrialSpec, bad, graded, ok, write_run
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.report import summarize
from agenteval.summary import stats
from agenteval.trials.trial import Trial


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


# ---- one-sided tests, Holm, clustered intervals ------------------------------------------


def test_mcnemar_one_sided_known_values() -> None:
    assert stats.mcnemar_one_sided(0, 0) == 1.0
    assert stats.mcnemar_one_sided(5, 0) == pytest.approx(1 / 32)  # 2**-n: all went worse
    assert stats.mcnemar_one_sided(0, 5) == 1.0
    assert stats.mcnemar_one_sided(1, 0) == 0.5
    # half the two-sided p-value when the counts lean the tested way
    assert stats.mcnemar_one_sided(20, 5) == pytest.approx(stats.mcnemar_exact(20, 5) / 2)


def test_min_discordant_to_reject() -> None:
    assert stats.min_discordant_to_reject(0.05) == 5  # 2**-5 = 0.031
    assert stats.min_discordant_to_reject(0.05 / 14) == 9  # 2**-9 = 0.00195 <= 0.00357
    assert stats.min_discordant_to_reject(1 / 32) == 5
    for level in (0.2, 0.01, 1e-4):
        d = stats.min_discordant_to_reject(level)
        assert stats.mcnemar_one_sided(d, 0) <= level < stats.mcnemar_one_sided(d - 1, 0)


def test_holm_known_values() -> None:
    # sorted 0.01, 0.02, 0.04 -> 3*0.01, max(0.03, 2*0.02), max(0.04, 0.04)
    assert stats.holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0]
    assert stats.holm([]) == []


@given(st.lists(st.floats(0, 1, allow_nan=False), max_size=20))
def test_holm_is_monotone_and_never_below_raw(ps: list[float]) -> None:
    adj = stats.holm(ps)
    for p, a in zip(ps, adj, strict=True):
        assert p <= a <= 1.0
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    assert [adj[i] for i in order] == sorted(adj[i] for i in order)


def _brute_force(diffs: list[float], alternative: str) -> float:
    nz = [d for d in diffs if d != 0]
    total, tol = sum(nz), 1e-12 * max(1.0, sum(abs(d) for d in nz))
    count = 0
    for mask in range(1 << len(nz)):
        s = sum(-d if mask >> i & 1 else d for i, d in enumerate(nz))
        if alternative == "less":
            count += s <= total + tol
        else:
            count += abs(s) >= abs(total) - tol
    return count / (1 << len(nz))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from([0.0, 0.25, -0.25, 0.5, -1.0]), st.floats(-1, 1)),
        max_size=12,
    ),
    st.sampled_from(["less", "two-sided"]),
)
def test_exact_permutation_matches_brute_force(diffs: list[float], alternative: str) -> None:
    r = stats.paired_permutation(diffs, alternative=alternative)  # type: ignore[arg-type]
    assert r.method == "exact"
    assert r.p_value == pytest.approx(_brute_force(diffs, alternative))


def test_one_sided_permutation_extremes_and_monte_carlo() -> None:
    assert stats.paired_permutation([-0.1] * 10, alternative="less").p_value == 2**-10
    assert stats.paired_permutation([0.1] * 10, alternative="less").p_value == 1.0
    assert stats.paired_permutation([0.1] * 10, alternative="greater").p_value == 2**-10
    # Monte Carlo: all 30 differences negative -> no draw is as extreme; p = 1/(R+1)
    r = stats.paired_permutation([-0.2] * 30, alternative="less", resamples=999)
    assert r.method == "monte_carlo" and r.p_value == pytest.approx(1 / 1000)
    # no effect: the sequential draw stops early at 40 extreme draws, p near 1/2 or more
    r = stats.paired_permutation([0.1, -0.1] * 20, alternative="less")
    assert r.method == "monte_carlo" and r.p_value > 0.3


def test_clustered_intervals_equal_plain_ones_with_one_trial_per_case() -> None:
    outcomes = [1] * 13 + [0] * 7
    clusters = [(x, 1) for x in outcomes]
    assert stats.clustered_pass_rate_interval(clusters) == pytest.approx(
        stats.wilson_interval(13, 20)
    )
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.6]
    mean = sum(values) / len(values)
    m2 = sum((v - mean) ** 2 for v in values)
    plain = stats.mean_interval(len(values), mean, m2)
    assert plain is not None
    assert stats.clustered_mean_interval([(1, v) for v in values]) == pytest.approx(plain)


@pytest.mark.parametrize("k", [2, 3, 8])
def test_identical_repeats_do_not_narrow_the_interval(k: int) -> None:
    outcomes = [1] * 13 + [0] * 7
    one = stats.clustered_pass_rate_interval([(x, 1) for x in outcomes])
    assert stats.clustered_pass_rate_interval([(k * x, k) for x in outcomes]) == pytest.approx(one)
    # the trial-level Wilson interval would be about sqrt(k) narrower
    naive = stats.wilson_interval(13 * k, 20 * k)
    assert naive[1] - naive[0] < (one[1] - one[0]) / math.sqrt(k) * 1.1
    values = [0.1, 0.5, 0.9, 0.3]
    one_m = stats.clustered_mean_interval([(1, v) for v in values])
    assert stats.clustered_mean_interval([(k, k * v) for v in values]) == pytest.approx(one_m)
    # every case passing every repeat: the interval of all-pass over the cases
    assert stats.clustered_pass_rate_interval([(k, k)] * 20) == pytest.approx(
        stats.wilson_interval(20, 20)
    )


def test_flaky_repeats_are_never_narrower_than_independent_trials() -> None:
    clusters = [(1, 2), (2, 2), (0, 2), (1, 2)] * 10  # 40 cases, 80 trials
    lo, hi = stats.clustered_pass_rate_interval(clusters)
    nlo, nhi = stats.wilson_interval(40, 80)
    assert hi - lo >= nhi - nlo - 1e-12


@pytest.mark.parametrize("k", [3])
def test_summary_interval_with_identical_repeats_equals_one_trial_per_case(
    tmp_path: Path, k: int
) -> None:
    """The summary (summary/accumulator.py) clusters by case: repeats never narrow by
    themselves."""
    cases = [Case(id=f"c{i}", input="q") for i in range(30)]

    def trials(repeats: int) -> list[TrialSpec]:
        out: list[TrialSpec] = []
        for i, case in enumerate(cases):
            for r in range(repeats):
                t = Trial(case_id=case.id, repeat=r, output="x")
                out.append((t, {"em": ok() if i % 3 else bad(), "g": graded(i / 30)}))
        return out

    one = summarize(write_run(tmp_path / "one", cases, trials(1)))
    many = summarize(write_run(tmp_path / "many", cases, trials(k)))
    for name in ("em", "g"):
        a, b = one.scorers[name], many.scorers[name]
        assert b.applicable == k * a.applicable
        assert a.pass_rate_ci is not None and b.pass_rate_ci is not None
        assert (b.pass_rate_ci.low, b.pass_rate_ci.high) == pytest.approx(
            (a.pass_rate_ci.low, a.pass_rate_ci.high)
        )
        assert a.mean_ci is not None and b.mean_ci is not None
        assert (b.mean_ci.low, b.mean_ci.high) == pytest.approx((a.mean_ci.low, a.mean_ci.high))
        assert b.pass_rate_ci.method == "wilson-clustered" and b.mean_ci.method == "t-clustered"
    assert many.repeats is not None  # pass@k / pass^k still reported


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))))
def test_the_exact_binomial_tail_is_the_sum_of_the_coefficients(nk: tuple[int, int]) -> None:
    # the tail is built term by term; it must be the very float of the plain sum
    n, k = nk
    plain = sum(math.comb(n, i) for i in range(k, n + 1)) / (1 << n)
    assert stats.binomial_half_tail(n, k) == plain
