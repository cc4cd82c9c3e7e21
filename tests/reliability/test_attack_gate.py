"""Attacks on the gate's statistics and options that broke it (each test failed before)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from reliability_support import no_traceback, run_cli

from agenteval.cases.case import Case
from agenteval.errors import EXIT_INPUT
from agenteval.gate.checks import MAX_RESAMPLES, resamples_for
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.summary import stats
from agenteval.trials.trial import Trial

pytestmark = pytest.mark.reliability


def _run(run_dir: Path, values: list[float]) -> Path:
    header = RunHeader(dataset=DatasetRef(path="d.jsonl", sha256="same", cases=len(values)))
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=f"c{i}", input="q") for i in range(len(values))])
        for i, v in enumerate(values):
            w.append(
                Trial(case_id=f"c{i}", output="x"),
                {"graded_x": Score(v, "checked", threshold=0.5), "exact": Score(1.0, "ok")},
            )
    return run_dir


@pytest.mark.parametrize("alpha", ["1e-310", "5e-324"])
def test_a_tiny_alpha_is_one_line_and_exit_2_not_a_traceback_with_exit_1(
    tmp_path: Path, alpha: str
) -> None:
    # before: OverflowError (40 / level is inf) or ValueError (level is 0), exit 1 = "BLOCKED"
    base = _run(tmp_path / "base", [0.9] * 30)
    cand = _run(tmp_path / "cand", [0.2] * 30)
    proc = run_cli("gate", base, cand, "--alpha", alpha)
    assert no_traceback([proc.stdout, proc.stderr]), proc.stderr
    if alpha == "5e-324":  # alpha / family size is 0.0: refused, one line
        assert proc.returncode == EXIT_INPUT, proc.stderr
        assert proc.stderr.count("\n") == 1 and "--alpha" in proc.stderr
    else:  # tiny but representable: no drop can show, so underpowered
        assert proc.returncode == 3, proc.stdout + proc.stderr


def test_resamples_for_a_level_whose_reciprocal_overflows_is_the_cap() -> None:
    assert resamples_for(1e-310) == MAX_RESAMPLES
    assert resamples_for(40 / MAX_RESAMPLES) == MAX_RESAMPLES
    assert resamples_for(0.05) == stats.MONTE_CARLO_RESAMPLES


def _size(diffs_by_neg: list[tuple[float, list[float]]], level: float) -> float:
    """Exact chance, under random signs, that the one-sided test rejects at ``level``:
    ``diffs_by_neg`` lists (probability of the sign pattern, differences)."""
    rejected = 0.0
    for prob, diffs in diffs_by_neg:
        if stats.paired_permutation(diffs, alternative="less").p_value <= level:
            rejected += prob
    return rejected


@pytest.mark.parametrize("level", [0.05 / 3, 0.05 / 14, 0.01 / 14])
def test_normal_path_rejects_no_more_often_than_the_level_with_equal_differences(
    level: float,
) -> None:
    # a graded scorer with one step (e.g. 0.5 -> 0 or 1) changed on more than 200 cases: K
    # equal differences; before, the size was up to 1.18x the level (K = 203..226)
    worst = 0.0
    for k in range(stats.MONTE_CARLO_MAX + 1, stats.MONTE_CARLO_MAX + 40):
        patterns = [
            (math.comb(k, neg) / 2**k, [-0.5] * neg + [0.5] * (k - neg)) for neg in range(k + 1)
        ]
        assert stats.paired_permutation(patterns[0][1], alternative="less").method == "normal"
        worst = max(worst, _size(patterns, level) / level)
    assert worst <= 1.0, f"size / level = {worst:.3f}"


@pytest.mark.parametrize("level", [0.05 / 3, 0.05 / 7, 0.05 / 14])
def test_normal_path_rejects_no_more_often_than_the_level_when_few_differences_dominate(
    level: float,
) -> None:
    # 201 tiny differences (half each sign) and K cases that moved a whole point: before,
    # the normal tail was far too small (size up to 1.9x the level, K = 5)
    tiny = [1e-6, -1e-6] * 100 + [1e-6]
    worst = 0.0
    for k in range(1, 30):
        patterns = [
            (math.comb(k, neg) / 2**k, tiny + [-1.0] * neg + [1.0] * (k - neg))
            for neg in range(k + 1)
        ]
        worst = max(worst, _size(patterns, level) / level)
    assert worst <= 1.0, f"size / level = {worst:.3f}"


def test_normal_path_still_finds_a_clear_graded_drop() -> None:
    # 300 cases, each 0.05 lower: the correction (one difference) costs next to nothing
    res = stats.paired_permutation([-0.05] * 250 + [0.05] * 50, alternative="less")
    assert res.method == "normal" and res.p_value < 1e-20


def test_mcnemar_on_many_discordant_cases_is_fast_and_exact() -> None:
    # before: the sum of n big binomial coefficients took 5 s at n = 10,000 (per test)
    import time
    from fractions import Fraction

    start = time.perf_counter()
    assert stats.mcnemar_one_sided(10_000, 10_000) == pytest.approx(0.502820, abs=1e-6)
    assert stats.mcnemar_exact(10_000, 9_000) < 1e-12
    assert time.perf_counter() - start < 1.0
    for n, k in ((1001, 520), (1001, 480), (1500, 1), (1500, 1500), (2001, 1100)):
        exact = Fraction(sum(math.comb(n, i) for i in range(k, n + 1)), 2**n)
        assert stats.binomial_half_tail(n, k) == pytest.approx(float(exact), rel=1e-14)
