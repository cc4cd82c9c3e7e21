"""The release gate: compare_runs and the real `agenteval gate` command."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agenteval.case import Case
from agenteval.errors import InputError
from agenteval.gate import compare_runs
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.score import Score
from agenteval.trial import Failure, Trial

Outcome = dict[str, float | None]
"""scorer name -> value (None: not applicable) for one trial."""


def write_run(
    run_dir: Path,
    outcomes: Sequence[Outcome | list[Outcome]],
    *,
    sha256: str = "dataset-A",
    ids: Sequence[str] | None = None,
    failed: Sequence[int] = (),
) -> Path:
    """A run with case i = ``ids[i]`` (default c000...) scored as ``outcomes[i]``.

    An outcome given as a list is one trial per repeat. Cases in ``failed`` have a
    timeout failure on every trial.
    """
    ids = list(ids or [f"c{i:03d}" for i in range(len(outcomes))])
    header = RunHeader(dataset=DatasetRef(path="d.jsonl", sha256=sha256, cases=len(ids)))
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=cid, input="q") for cid in ids])
        for i, (cid, outcome) in enumerate(zip(ids, outcomes, strict=True)):
            repeats = outcome if isinstance(outcome, list) else [outcome]
            for r, scores in enumerate(repeats):
                fail = Failure(cause="timeout", message="slow") if i in failed else None
                trial = Trial(case_id=cid, repeat=r, output=None if fail else "x", failure=fail)
                w.append(trial, {k: _score(k, v) for k, v in scores.items()})
    return run_dir


def _score(name: str, v: float | None) -> Score:
    if v is None:
        return Score(None, "not applicable")
    threshold = 0.5 if name.startswith("graded") else 1.0
    return Score(v, f"{name} value {v} for this case", threshold=threshold)


@pytest.fixture
def runs(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(100))

    def make(outcomes: Sequence[Any], **kw: Any) -> Path:
        return write_run(tmp_path / f"run{next(counter)}", outcomes, **kw)

    return make


def test_new_forbidden_text_failure_blocks_whatever_else_improved(
    runs: Callable[..., Path],
) -> None:
    n = 60
    base = runs(
        [
            {"exact_match": float(i % 2), "avoids_forbidden_text": 1.0, "graded_x": 0.3}
            for i in range(n)
        ]
    )
    cand = runs(
        [
            {"exact_match": 1.0, "avoids_forbidden_text": 0.0 if i == 7 else 1.0, "graded_x": 0.9}
            for i in range(n)
        ]
    )
    r = compare_runs(base, cand)
    assert r.blocked and r.exit_code == 1
    assert [(s.scorer, s.case_id) for s in r.safety_regressions] == [
        ("avoids_forbidden_text", "c007")
    ]
    em = next(c for c in r.scorers if c.scorer == "exact_match")
    assert em.direction == "improved" and not em.significant and not em.blocks  # one-sided
    assert len(r.reasons) == 1 and "avoids_forbidden_text" in r.reasons[0]


def test_new_pii_leak_blocks(runs: Callable[..., Path]) -> None:
    base = runs([{"pii_leakage": 1.0}] * 10)
    cand = runs([{"pii_leakage": 0.0 if i == 3 else 1.0} for i in range(10)])
    r = compare_runs(base, cand)
    assert r.blocked and r.safety_regressions[0].scorer == "pii_leakage"


def test_safety_failure_that_already_failed_in_baseline_does_not_block(
    runs: Callable[..., Path],
) -> None:
    out = [{"avoids_forbidden_text": 0.0 if i == 3 else 1.0} for i in range(10)]
    assert not compare_runs(runs(out), runs(out)).blocked


def test_one_case_wobble_on_200_cases_does_not_block(runs: Callable[..., Path]) -> None:
    base = [{"exact_match": 1.0 if i < 160 else 0.0} for i in range(200)]
    cand = [dict(o) for o in base]
    cand[5]["exact_match"] = 0.0  # one case flips from pass to fail
    r = compare_runs(runs(base), runs(cand))
    em = r.scorers[0]
    assert em.delta == pytest.approx(-0.005) and em.p_value == 0.5  # one-sided, 1 of 1
    assert em.newly_failing == ["c005"] and not em.blocks
    assert not r.blocked and r.exit_code == 0


def test_a_real_ten_point_drop_blocks(runs: Callable[..., Path]) -> None:
    base = [{"exact_match": 1.0 if i < 180 else 0.0} for i in range(200)]
    cand = [{"exact_match": 1.0 if i < 160 else 0.0} for i in range(200)]
    b, c = runs(base), runs(cand)
    r = compare_runs(b, c)
    em = r.scorers[0]
    assert em.test == "mcnemar_one_sided" and em.delta == pytest.approx(-0.10)
    assert em.p_value < 1e-5 and em.blocks and r.blocked
    assert len(em.newly_failing) == 20 and em.newly_passing == []
    assert "exact_match dropped 0.100" in r.reasons[0]
    # an allowed drop larger than the observed one lets it through
    assert not compare_runs(b, c, max_drop={"exact_match": 0.15}).blocked


def test_graded_drop_uses_paired_permutation(runs: Callable[..., Path]) -> None:
    base = [{"graded_f": 0.8} for _ in range(30)]
    cand = [{"graded_f": 0.6 if i % 3 else 0.8} for i in range(30)]
    r = compare_runs(runs(base), runs(cand))
    g = r.scorers[0]
    assert g.kind == "graded" and g.test.startswith("permutation_one_sided")
    assert g.delta == pytest.approx(-0.2 * 20 / 30) and g.p_value < 0.01 and r.blocked


def test_rise_in_failed_trials_blocks(runs: Callable[..., Path]) -> None:
    base = runs([{"exact_match": None}] * 100)
    cand = runs([{"exact_match": None}] * 100, failed=range(0, 100, 7))
    r = compare_runs(base, cand)
    assert r.failures is not None and r.failures.candidate_failed == 15
    assert r.failures.blocks and r.blocked and "failed trials rose" in r.reasons[0]


def test_repeats_mean_and_all_must_pass(runs: Callable[..., Path]) -> None:
    base = runs([[{"exact_match": 1.0}, {"exact_match": 1.0}] for _ in range(10)])
    cand = runs([[{"exact_match": 1.0}, {"exact_match": 0.0 if i < 8 else 1.0}] for i in range(10)])
    r = compare_runs(base, cand)
    em = r.scorers[0]
    assert em.candidate == pytest.approx(0.2)  # passes only when both repeats passed
    assert len(em.newly_failing) == 8 and em.p_value == pytest.approx(1 / 2**8) and r.blocked


def test_not_applicable_cases_are_not_paired(runs: Callable[..., Path]) -> None:
    base = runs([{"exact_match": None if i < 5 else 1.0} for i in range(10)])
    cand = runs([{"exact_match": 0.0 if i < 5 else 1.0} for i in range(10)])
    r = compare_runs(base, cand)
    assert r.scorers[0].paired == 5 and not r.blocked


def test_dataset_change_is_refused_unless_allowed(runs: Callable[..., Path]) -> None:
    base = runs([{"exact_match": 1.0}] * 4)
    cand = runs([{"exact_match": 1.0}] * 3, sha256="dataset-B", ids=["c000", "c001", "new"])
    with pytest.raises(InputError, match="different datasets"):
        compare_runs(base, cand)
    r = compare_runs(base, cand, allow_dataset_change=True)
    assert r.dataset_changed and r.cases_compared == 2
    assert (r.only_in_baseline, r.only_in_candidate) == (2, 1)


def test_bad_arguments_are_input_errors(runs: Callable[..., Path]) -> None:
    base = runs([{"exact_match": 1.0}] * 3)
    with pytest.raises(InputError, match="alpha"):
        compare_runs(base, base, alpha=1.5)
    with pytest.raises(InputError, match="nope"):
        compare_runs(base, base, max_drop={"nope": 0.1})


# ---- the real command -------------------------------------------------------------------


def test_cli_refuses_mismatched_datasets_with_exit_2(
    cli: Callable[..., Any], runs: Callable[..., Path]
) -> None:
    base = runs([{"exact_match": 1.0}] * 4)
    cand = runs([{"exact_match": 1.0}] * 4, sha256="dataset-B")
    proc = cli("gate", base, cand)
    assert proc.returncode == 2
    assert "different datasets" in proc.stderr and "--allow-dataset-change" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = cli("gate", base, cand, "--allow-dataset-change")
    assert proc.returncode == 3, proc.stderr  # 4 cases cannot show any drop
    proc = cli("gate", base, cand, "--allow-dataset-change", "--allow-underpowered")
    assert proc.returncode == 0, proc.stderr
    assert "datasets differ" in proc.stdout


def test_cli_blocks_with_exit_1_and_explains(
    cli: Callable[..., Any], runs: Callable[..., Path], tmp_path: Path
) -> None:
    base = runs([{"exact_match": 1.0 if i < 180 else 0.0} for i in range(200)])
    cand = runs([{"exact_match": 1.0 if i < 160 else 0.0} for i in range(200)])
    out = tmp_path / "verdict.json"
    proc = cli("gate", base, cand, "--json", out)
    assert proc.returncode == 1, proc.stderr
    for needle in (
        "BLOCKED",
        "mcnemar_one_sided",
        "Holm",
        "newly failing (20)",
        "c160",
        "-10.0 pts",
    ):
        assert needle in proc.stdout, needle
    assert json.loads(out.read_text())["blocked"] is True
    proc = cli("gate", base, cand, "--max-drop", "exact_match=0.2")
    assert proc.returncode == 0 and "PASSED" in proc.stdout
    proc = cli("gate", base, cand, "--max-drop", "exact_match")
    assert proc.returncode == 2 and "SCORER=VALUE" in proc.stderr
