"""assert_case, assert_scores and assert_no_regression on real runs (evaluate() with
out=), with verdicts checked against runs whose truth is known."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from agenteval import Case, evaluate
from agenteval.evaluation import Run
from agenteval.testing import CaseResult, assert_case, assert_no_regression, assert_scores
from agenteval.testing.assertions import UnderpoweredGateWarning

CASES = [{"id": f"c{i:02d}", "input": f"{i} + 1?", "expected": str(i + 1)} for i in range(20)]


def right(case: Case) -> str:
    return str(int(case.input.split()[0]) + 1)


def half_wrong(case: Case) -> str:
    n = int(case.input.split()[0])
    return str(n + 1 if n % 2 else n + 2)  # every even case is off by one


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    base = tmp_path_factory.mktemp("runs")
    return {
        "right": evaluate(CASES, right, out=base / "right", builtin_scorers=True),
        "half": evaluate(CASES, half_wrong, out=base / "half"),
    }


def _case(run: Run, case_id: str) -> CaseResult:
    return CaseResult(case_id, tuple(t for t in run.trials if t.case_id == case_id), run)


def test_assert_case_passes_a_right_case_and_lists_a_wrong_one(runs: dict[str, Run]) -> None:
    assert assert_case(_case(runs["right"], "c00")).case_id == "c00"
    with pytest.raises(AssertionError) as e:
        assert_case(_case(runs["half"], "c00"))
    assert str(e.value).splitlines() == [
        "case 'c00': 1 score(s) not passed",
        "  exact_match  failed 0.00  expected 1, got 2: differ by 1, more than 0.01",
        "  answer: '2'",
        f"run: {runs['half'].run_dir}",
    ]
    assert_case(_case(runs["half"], "c00"), scorers=["pii_leakage"])  # only the ones named


def test_assert_case_refuses_an_unknown_status(runs: dict[str, Run]) -> None:
    with pytest.raises(ValueError, match="fail_on takes"):
        assert_case(_case(runs["right"], "c00"), fail_on=["not_applicable"])


def test_a_case_with_no_trial_fails(runs: dict[str, Run]) -> None:
    with pytest.raises(AssertionError, match="no trial was recorded"):
        assert_case(CaseResult("gone", (), runs["right"]))


def test_assert_scores_checks_the_mean_against_the_floor(runs: dict[str, Run]) -> None:
    assert assert_scores(runs["right"], exact_match=1.0) == {"exact_match": 1.0}
    assert assert_scores(runs["half"], {"exact_match": 0.5}) == {"exact_match": 0.5}
    with pytest.raises(AssertionError) as e:
        assert_scores(runs["half"], exact_match=0.9)
    lines = str(e.value).splitlines()
    assert lines[0] == "exact_match: mean 0.500 < floor 0.9 (10 of 20 passed)"
    assert lines[1:6] == [
        f"    c{i:02d}: 0.00 expected {i + 1}, got {i + 2}: differ by 1, more than 0.01"
        for i in (0, 2, 4, 6, 8)
    ]
    assert lines[6] == "    ... and 5 more"


def test_assert_scores_fails_a_scorer_the_run_lacks_or_one_never_applicable(
    runs: dict[str, Run],
) -> None:
    with pytest.raises(AssertionError, match=r"exact_mach: the run has no such scorer \(it has: "):
        assert_scores(runs["right"], exact_mach=0.9)
    with pytest.raises(AssertionError, match="tool_selection: no applicable value in 20 trials"):
        assert_scores(runs["right"], tool_selection=0.5)
    with pytest.raises(ValueError, match="within"):
        assert_scores(runs["right"], exact_match=90)
    with pytest.raises(ValueError, match="at least one"):
        assert_scores(runs["right"])


def test_assert_no_regression_blocks_a_real_drop_with_the_gate_report(
    runs: dict[str, Run],
) -> None:
    with pytest.raises(AssertionError) as e:
        assert_no_regression(runs["half"], runs["right"])
    report = str(e.value)
    assert "exact_match" in report and "BLOCKED" in report
    result = assert_no_regression(runs["right"], runs["right"].run_dir)
    assert not result.blocked and not result.underpowered


def test_an_underpowered_gate_fails_unless_allowed_then_warns(tmp_path: Path) -> None:
    few = CASES[:3]
    base = evaluate(few, right, out=tmp_path / "base")
    cand = evaluate(few, half_wrong, out=tmp_path / "cand")
    with pytest.raises(AssertionError, match="underpowered"):
        assert_no_regression(cand, base)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = assert_no_regression(cand, base, allow_underpowered=True)
    assert result.underpowered and not result.blocked
    assert [w.category for w in caught] == [UnderpoweredGateWarning]
    assert "no drop can be significant" in str(caught[0].message)
