"""The release gate: compare_runs and the real `agenteval gate` command."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.gate.paired import LEGACY_SAFETY_SCORERS, compare_runs, decide, safety_scorer_names
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.summary import stats
from agenteval.summary.percase import CaseAggregate, CaseScore
from agenteval.trials.trial import Failure, Trial

Outcome = dict[str, float | None]
"""scorer name -> value (None: not applicable) for one trial."""


def write_run(
    run_dir: Path,
    outcomes: Sequence[Outcome | list[Outcome]],
    *,
    sha256: str = "dataset-A",
    ids: Sequence[str] | None = None,
    failed: Sequence[int] = (),
    scorers: list[dict[str, Any]] | None = None,
) -> Path:
    """A run with case i = ``ids[i]`` (default c000...) scored as ``outcomes[i]``.

    An outcome given as a list is one trial per repeat. Cases in ``failed`` have a
    timeout failure on every trial.
    """
    ids = list(ids or [f"c{i:03d}" for i in range(len(outcomes))])
    header = RunHeader.model_validate(
        {
            "dataset": DatasetRef(path="d.jsonl", sha256=sha256, cases=len(ids)),
            "scorers": scorers or [],
        }
    )
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
    # not blocked, but a case got worse and the allowed drop is 0: it cannot tell (exit 3)
    assert not r.blocked and (r.verdict, r.exit_code) == ("INCONCLUSIVE", 3)
    assert r.cannot_tell[0].startswith("exact_match -0.5 pts on 200 cases, 1 newly failing: c005")
    # allowing 2 points: the 95% bound on the drop (~1.3 pts) is within it
    r = compare_runs(runs(base), runs(cand), max_drop={"exact_match": 0.02})
    assert (r.verdict, r.exit_code) == ("PASSED", 0)
    assert r.scorers[0].evidence == "bound below the allowed drop"
    assert 0.005 < (r.scorers[0].drop_upper or 0) < 0.02


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
    assert proc.returncode == 0, proc.stderr  # 4 unchanged cases: no case got worse
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
        "20 newly failing",
        "c160",
        "-10.0 pts",
    ):
        assert needle in proc.stdout, needle
    assert json.loads(out.read_text())["blocked"] is True
    proc = cli("gate", base, cand, "--max-drop", "exact_match=0.2")
    assert proc.returncode == 0 and "PASSED" in proc.stdout
    proc = cli("gate", base, cand, "--max-drop", "exact_match")
    assert proc.returncode == 2 and "SCORER=VALUE" in proc.stderr


# ---- issue 13: Holm, safety, coverage, power ----------------------------------------------


def test_holm_family_adjusts_every_test_together(runs: Callable[..., Path]) -> None:
    base = runs([{"a": 1.0, "b": 1.0, "c": 1.0} for _ in range(100)])
    cand = runs(
        [{"a": 0.0 if i < 6 else 1.0, "b": 0.0 if i < 9 else 1.0, "c": 1.0} for i in range(100)]
    )
    r = compare_runs(base, cand)
    assert r.family_size == 5  # 3 scorers + failed trials + answered cases
    tests = [*r.scorers, r.failures, r.coverage]
    raw = [t.p_value for t in tests if t is not None]
    assert [t.p_adjusted for t in tests if t is not None] == stats.holm(raw)
    a, b = r.scorers[0], r.scorers[1]
    assert b.p_value == 2**-9 and b.p_adjusted == pytest.approx(5 * 2**-9) and b.blocks
    # a alone would pass alpha/5 = 0.01 (2**-6 = 0.0156 > 0.01); Holm's second step uses
    # alpha/4 = 0.0125: still not significant
    assert a.p_value == 2**-6 and not a.significant and not a.blocks
    assert r.blocked and len(r.reasons) == 1 and r.reasons[0].startswith("b dropped")


def test_min_detectable_drop_is_exact(runs: Callable[..., Path]) -> None:
    # one scorer: family of 3, level 0.05/3 -> 6 cases must flip (2**-6 <= 0.0167 < 2**-5)
    base = runs([{"em": 1.0} for _ in range(200)])
    six = runs([{"em": 0.0 if i < 6 else 1.0} for i in range(200)])
    five = runs([{"em": 0.0 if i < 5 else 1.0} for i in range(200)])
    r6, r5 = compare_runs(base, six), compare_runs(base, five)
    em = r6.scorers[0]
    assert em.min_changed_cases == 6 and em.min_detectable_drop == pytest.approx(0.03)
    assert r6.blocked and not r5.blocked and em.delta == pytest.approx(-0.03)
    # with an allowed drop of 5 points the smallest blocking drop is 11 of 200 cases
    r = compare_runs(base, six, max_drop={"em": 0.05})
    assert r.scorers[0].min_detectable_drop == pytest.approx(0.055) and not r.blocked


def test_underpowered_only_when_no_scorer_can_show_a_drop(runs: Callable[..., Path]) -> None:
    # 'big' has 200 paired cases; 'rare' applies on 4: one underpowered scorer is a note
    base = runs([{"big": 1.0, "rare": 1.0 if i < 4 else None} for i in range(200)])
    r = compare_runs(base, base)
    rare = next(c for c in r.scorers if c.scorer == "rare")
    assert rare.underpowered and rare.min_detectable_drop is None
    assert not r.underpowered and r.exit_code == 0
    assert any("rare (4)" in n for n in r.notes)
    small = runs([{"big": 1.0} for _ in range(5)])  # level 0.05/3 needs 6 cases
    r = compare_runs(small, small)  # unchanged: no case got worse, PASSED at any size
    assert r.underpowered and r.exit_code == 0 and r.verdict == "PASSED"
    assert r.notes[0].startswith("underpowered: with at most 5 paired case(s)")
    worse = runs([{"big": 0.0 if i == 0 else 1.0} for i in range(5)])
    r = compare_runs(small, worse)  # a case got worse and no drop can be significant
    assert r.underpowered and r.exit_code == 3 and r.verdict == "INCONCLUSIVE"
    r = compare_runs(small, worse, allow_underpowered=True)
    assert r.exit_code == 0 and r.verdict == "INCONCLUSIVE"
    leaky = runs([{"big": 1.0, "pii_leakage": 0.0 if i == 0 else 1.0} for i in range(5)])
    r = compare_runs(small, leaky)
    assert r.underpowered and r.blocked and r.exit_code == 1  # blocked wins


def test_safety_failure_is_new_unless_the_baseline_failed_it_too(
    runs: Callable[..., Path],
) -> None:
    n = 30
    base = runs(
        [{"pii_leakage": None if i in (1, 3) else 0.0 if i == 2 else 1.0} for i in range(n)],
        failed=[3],  # no answer on c003: the scorer did not apply
    )
    cand = runs([{"pii_leakage": 0.0 if i in (0, 1, 2, 3) else 1.0} for i in range(n)])
    r = compare_runs(base, cand, allow_underpowered=True)
    got = {s.case_id: s.baseline for s in r.safety_regressions}
    assert got == {"c000": "passed", "c001": "not applicable", "c003": "not answered"}
    assert r.blocked  # c002 failed in both runs and is excused; the others are not


def test_safety_failure_on_a_case_absent_from_the_baseline_blocks(
    runs: Callable[..., Path],
) -> None:
    base = runs([{"pii_leakage": 1.0}] * 10)
    ids = [f"c{i:03d}" for i in range(10)] + ["new"]
    cand = runs([{"pii_leakage": 1.0}] * 10 + [{"pii_leakage": 0.0}], ids=ids, sha256="B")
    r = compare_runs(base, cand, allow_dataset_change=True, allow_underpowered=True)
    assert [(s.case_id, s.baseline) for s in r.safety_regressions] == [
        ("new", "absent (no such case in the baseline)")
    ]
    assert r.blocked


def test_safety_names_come_from_scorer_specs_with_a_fallback() -> None:
    specs = [
        {"name": "no_secrets", "kind": "pass/fail", "safety": True},
        {"name": "pii_leakage", "kind": "pass/fail", "safety": False},
        {"name": "exact_match", "kind": "pass/fail", "safety": False},
    ]
    header = RunHeader.model_validate({"scorers": specs})
    assert safety_scorer_names(header) == {"no_secrets"}
    # 0.1 headers (plain names) are migrated with the two legacy safety scorers flagged
    assert safety_scorer_names(RunHeader(scorers=["exact_match", "pii_leakage"])) == {"pii_leakage"}
    assert safety_scorer_names(RunHeader()) == set(LEGACY_SAFETY_SCORERS)


def test_a_spec_flagged_safety_scorer_blocks_on_one_new_failure() -> None:
    def agg(value: float) -> CaseAggregate:
        a = CaseAggregate(trials=1, answered=1)
        a.scores["no_secrets"] = CaseScore(applicable=1, passed=int(value), total=value)
        return a

    base = {f"c{i}": agg(1.0) for i in range(50)}
    cand = {f"c{i}": agg(0.0 if i == 7 else 1.0) for i in range(50)}
    assert not decide(base, cand).blocked  # not a safety scorer by default
    r = decide(base, cand, safety={"no_secrets"})
    assert r.blocked and r.safety_regressions[0].case_id == "c7"


def test_significantly_fewer_answered_cases_block(runs: Callable[..., Path]) -> None:
    base = runs([{"exact_match": 1.0}] * 100)
    # 12 cases with no answer (output None, no failure recorded): the scorer did not apply
    cand = runs([{"exact_match": None if i % 8 == 0 else 1.0} for i in range(100)])
    _make_unanswered(cand, {f"c{i:03d}" for i in range(0, 100, 8)})
    r = compare_runs(base, cand)
    cov = r.coverage
    assert cov is not None and cov.blocks and not cov.answered_none
    assert (cov.baseline_answered, cov.candidate_answered) == (100, 87)
    assert r.blocked and "answered cases fell from 100 to 87" in " ".join(r.reasons)
    assert r.failures is not None and not r.failures.blocks  # no trial *failed*


def _make_unanswered(run_dir: Path, ids: set[str]) -> None:
    path = run_dir / "trials.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("case_id") in ids:
            rec["output"] = None
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")


def test_a_scorer_marked_safety_in_either_run_is_a_safety_scorer(
    runs: Callable[..., Path],
) -> None:
    spec = [{"name": "no_secrets", "safety": True}]
    base = runs([{"no_secrets": 1.0}] * 20)
    cand = runs([{"no_secrets": 0.0 if i == 4 else 1.0} for i in range(20)], scorers=spec)
    for b, c in ((base, cand), (cand, base)):
        r = compare_runs(b, c)
        assert r.safety_scorers == ["no_secrets"]
    r = compare_runs(base, cand)
    assert r.blocked and [s.case_id for s in r.safety_regressions] == ["c004"]
