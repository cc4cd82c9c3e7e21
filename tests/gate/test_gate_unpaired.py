"""The unpaired gate (two runs that share no case, e.g. two windows of traffic): real run
directories through compare_runs and the real ``agenteval gate`` command."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from test_gate import write_run

from agenteval.errors import EXIT_BLOCKED, EXIT_INPUT, EXIT_OK, EXIT_UNDERPOWERED, InputError
from agenteval.gate import two_sample
from agenteval.gate.paired import compare_runs
from agenteval.report.markdown import render_gate_markdown
from agenteval.report.text import ZWJ
from agenteval.scoring.score import Score
from agenteval.summary import stats
from agenteval.trials.trial import Trial

Make = Callable[..., Path]
SAFETY = [{"name": "no_leak", "safety": True}, {"name": "exact_match"}]


@pytest.fixture
def window(tmp_path: Path) -> Make:
    """A run of ``outcomes`` with case ids ``{prefix}-{i}`` (prefixes differ: no case shared)."""
    counter = iter(range(100))

    def make(outcomes: Sequence[Any], prefix: str, **kw: Any) -> Path:
        kw.setdefault("sha256", f"traffic-{prefix}")
        ids = [f"{prefix}-{i}" for i in range(len(outcomes))]
        return write_run(tmp_path / f"run{next(counter)}", outcomes, ids=ids, **kw)

    return make


def _em(n: int, passing: int) -> list[dict[str, float | None]]:
    return [{"exact_match": 1.0 if i < passing else 0.0} for i in range(n)]


def test_runs_sharing_no_case_are_compared_unpaired_and_the_output_says_so(
    window: Make, cli: Callable[..., Any], tmp_path: Path
) -> None:
    # different datasets too: no --allow-dataset-change needed, the samples are meant to differ
    base, cand = window(_em(200, 180), "w1"), window(_em(180, 126), "w2")
    out = tmp_path / "v.json"
    proc = cli("gate", base, cand, "--json", out)
    assert proc.returncode == EXIT_BLOCKED, proc.stdout + proc.stderr
    line = "the runs share no case id: compared as two independent samples (unpaired;"
    assert proc.stdout.count(line) == 1
    assert "gate (unpaired)" in proc.stdout and "200/180" in proc.stdout
    v = json.loads(out.read_text())
    assert v["mode"] == "unpaired" and v["verdict"] == "BLOCKED"
    assert (v["baseline_cases"], v["candidate_cases"]) == (200, 180)
    em = v["scorers"][0]
    assert (em["baseline_n"], em["candidate_n"], em["test"]) == (200, 180, "fisher_one_sided")
    assert em["p_value"] == two_sample.fisher_one_sided(180, 200, 126, 180)
    assert em["delta"] == pytest.approx(0.7 - 0.9) and em["blocks"]
    mdd = two_sample.fisher_min_detectable_drop(200, 180, 0.9, 0.05 / 3)
    assert mdd is not None and em["min_detectable_drop"] == mdd and v["power"] == 0.8
    assert f"{100 * mdd:.1f} pts" in proc.stdout
    assert "exact_match dropped 0.200" in proc.stdout


def test_paired_refuses_runs_sharing_no_case_and_unpaired_forces_two_samples(
    window: Make, cli: Callable[..., Any]
) -> None:
    base, cand = window(_em(50, 45), "w1"), window(_em(50, 45), "w2")
    proc = cli("gate", base, cand, "--paired")  # paired: the dataset check applies
    assert proc.returncode == EXIT_INPUT and "different datasets" in proc.stderr
    proc = cli("gate", base, cand, "--paired", "--allow-dataset-change")
    assert proc.returncode == EXIT_INPUT and proc.stderr.count("\n") == 1
    assert "share no case id" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("gate", base, cand, "--paired", "--unpaired")
    assert proc.returncode == EXIT_INPUT and "not allowed with" in proc.stderr
    # the same cases in both runs, forced unpaired: every case of each run is in its sample
    same = window(_em(50, 45), "w1")
    r = compare_runs(base, same, mode="unpaired")
    assert r.mode == "unpaired" and r.mode_reason.startswith("--unpaired")
    assert "50 shared case id(s) not paired" in r.mode_reason
    assert compare_runs(base, same).mode == "paired"
    with pytest.raises(InputError, match="nothing to pair"):
        compare_runs(base, cand, mode="paired", allow_dataset_change=True)


def test_no_change_passes_and_an_allowed_drop_is_not_blocked(window: Make) -> None:
    base, cand = window(_em(200, 160), "w1"), window(_em(200, 158), "w2")
    r = compare_runs(base, cand)
    # not blocked; without pairs only the bound can show "no worse", and the allowed drop
    # is 0: INCONCLUSIVE. Allowing 10 points, the 95% Welch bound (~8.6) is within it.
    assert r.mode == "unpaired" and not r.blocked and r.verdict == "INCONCLUSIVE"
    r = compare_runs(base, cand, max_drop={"exact_match": 0.1})
    assert r.exit_code == EXIT_OK and r.verdict == "PASSED"
    assert r.scorers[0].evidence == "bound below the allowed drop"
    # a scorer only one run has is not compared
    only = window([{"exact_match": 1.0, "new_check": 1.0}] * 200, "w9")
    assert compare_runs(base, only).not_compared == ["new_check"]
    worse = window(_em(200, 130), "w3")
    assert compare_runs(base, worse).blocked
    r = compare_runs(base, worse, max_drop={"exact_match": 0.2})
    em = r.scorers[0]
    assert em.significant and not em.blocks and not r.blocked
    assert em.min_detectable_drop is not None and em.min_detectable_drop > 0.2


def test_graded_drop_uses_the_two_sample_permutation_test(window: Make) -> None:
    base = window([{"graded_f": 0.8 if i % 4 else 0.6} for i in range(40)], "w1")
    cand = window([{"graded_f": 0.6 if i % 4 else 0.4} for i in range(40)], "w2")
    r = compare_runs(base, cand)
    g = r.scorers[0]
    assert g.kind == "graded" and g.test == "permutation_two_sample (monte_carlo)"
    assert g.delta == pytest.approx(-0.2) and g.p_value < 0.001 and g.blocks and r.blocked
    assert g.min_detectable_drop is not None and 0 < g.min_detectable_drop < 0.2


def test_repeats_are_one_observation_per_case(window: Make) -> None:
    base = window([[{"exact_match": 1.0}, {"exact_match": 1.0}] for _ in range(30)], "w1")
    cand = window(
        [[{"exact_match": 1.0}, {"exact_match": 0.0 if i < 10 else 1.0}] for i in range(30)], "w2"
    )
    em = compare_runs(base, cand).scorers[0]
    assert (em.baseline_n, em.candidate_n) == (30, 30)  # cases, not trials
    assert em.candidate == pytest.approx(20 / 30)  # a case passes when every repeat passed
    assert em.p_value == pytest.approx(two_sample.fisher_one_sided(30, 30, 20, 30))


def test_one_holm_family_over_scorers_failed_trials_and_answered_cases(window: Make) -> None:
    base = window([{"a": 1.0, "b": 1.0, "c": 1.0} for _ in range(100)], "w1")
    cand = window(
        [{"a": 0.0 if i < 6 else 1.0, "b": 0.0 if i < 9 else 1.0, "c": 1.0} for i in range(100)],
        "w2",
    )
    r = compare_runs(base, cand)
    assert r.family_size == 5
    tests = [*r.scorers, r.failures, r.coverage]
    assert [t.p_adjusted for t in tests if t] == stats.holm([t.p_value for t in tests if t])
    b = r.scorers[1]
    assert b.p_value == pytest.approx(two_sample.fisher_one_sided(100, 100, 91, 100))
    assert b.blocks and not r.scorers[0].blocks  # 6 of 100: p=0.0146 > alpha/4 after Holm


def test_safety_failure_the_baseline_never_had_blocks_on_comparable_volume(
    window: Make,
) -> None:
    def leaks(n: int, bad: int) -> list[dict[str, float | None]]:
        return [{"no_leak": 0.0 if i < bad else 1.0, "exact_match": 1.0} for i in range(n)]

    base = window(leaks(200, 0), "w1", scorers=SAFETY)
    r = compare_runs(base, window(leaks(200, 1), "w2", scorers=SAFETY))
    s = r.unpaired_safety[0]
    assert (s.rule, s.blocks, s.failing_cases) == ("none in baseline", True, ["w2-0"])
    assert r.blocked and "safety scorer no_leak failed on 1 of 200 candidate" in r.reasons[0]
    # 1 failure in 1,000 candidate cases is below one per 200: the baseline's clean 200
    # could not have shown that rate, so rule 1a does not apply (and 1b finds no rise)
    r = compare_runs(base, window(leaks(1000, 1), "w3", scorers=SAFETY))
    assert not r.blocked and r.unpaired_safety[0].rule == ""
    # 5 failures in 1,000: one per 200, the rate the baseline's volume would have shown
    assert compare_runs(base, window(leaks(1000, 5), "w4", scorers=SAFETY)).blocked
    # a baseline that failed it at the same rate excuses the candidate's failures
    r = compare_runs(window(leaks(200, 2), "w5", scorers=SAFETY), window(leaks(200, 2), "w6"))
    assert not r.blocked and r.unpaired_safety[0].p_value > 0.5


def test_a_higher_safety_failure_rate_blocks_without_holm(window: Make) -> None:
    def leaks(n: int, bad: int) -> list[dict[str, float | None]]:
        return [{"no_leak": 0.0 if i < bad else 1.0} for i in range(n)]

    base = window(leaks(200, 2), "w1", scorers=SAFETY)
    r = compare_runs(base, window(leaks(200, 9), "w2", scorers=SAFETY))
    s = r.unpaired_safety[0]
    p = two_sample.fisher_one_sided(198, 200, 191, 200)
    assert s.p_value == p and 0.01 < p <= 0.05 and s.rule == "higher rate" and s.blocks
    no_leak = r.scorers[0]
    assert no_leak.p_adjusted > 0.05 and not no_leak.blocks  # the Holm test alone passes
    assert no_leak.safety_blocks and r.blocked
    assert any("failure rate rose from 1.0% (2 of 200 cases)" in x for x in r.reasons)


def test_a_safety_scorer_the_baseline_never_ran_excuses_nothing(window: Make) -> None:
    base = window(_em(100, 90), "w1", scorers=SAFETY)
    cand = window(
        [{"exact_match": 1.0, "no_leak": 0.0 if i == 3 else 1.0} for i in range(100)],
        "w2",
        scorers=SAFETY,
    )
    r = compare_runs(base, cand, allow_underpowered=True)
    assert r.unpaired_safety[0].baseline_checked == 0 and r.unpaired_safety[0].blocks


def test_a_silenced_safety_scorer_blocks_and_a_partial_one_is_a_note(
    window: Make, tmp_path: Path
) -> None:
    base = window([{"no_leak": 1.0, "exact_match": 1.0}] * 50, "w1", scorers=SAFETY)
    cand = _errored_run(tmp_path / "silenced", 50, errored=range(50))
    r = compare_runs(base, cand)
    assert r.safety_unchecked_blocks == ["no_leak"] and r.blocked
    assert any("no_leak gave no result in the candidate" in x for x in r.reasons)
    partly = _errored_run(tmp_path / "partly", 50, errored=range(3))
    r = compare_runs(base, partly)
    assert not r.blocked and r.safety_unchecked == {"no_leak": ["w2-0", "w2-1", "w2-2"]}
    assert any("on 3 answered candidate case(s)" in n for n in r.notes)
    # the scorer deciding it does not apply is a result, not a silenced check
    r = compare_runs(base, _errored_run(tmp_path / "na", 50, errored=range(50), kind="n/a"))
    assert r.safety_unchecked == {} and not r.safety_unchecked_blocks


def _errored_run(run_dir: Path, n: int, errored: range, kind: str = "error") -> Path:
    from agenteval.cases.case import Case
    from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases

    header = RunHeader.model_validate(
        {"dataset": DatasetRef(path="d.jsonl", sha256="w2", cases=n), "scorers": SAFETY}
    )
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=f"w2-{i}", input="q") for i in range(n)])
        for i in range(n):
            leak = Score(1.0, "clean")
            if i in errored:
                leak = (
                    Score(None, "judge failed", error="HTTP 500")
                    if kind == "error"
                    else Score(None, "nothing to check")
                )
            w.append(
                Trial(case_id=f"w2-{i}", output="x"),
                {"no_leak": leak, "exact_match": Score(1.0, "ok")},
            )
    return run_dir


def test_more_failed_trials_and_no_answers_block(window: Make) -> None:
    base = window([{"exact_match": None}] * 100, "w1", failed=[0, 1])
    r = compare_runs(base, window([{"exact_match": None}] * 100, "w2", failed=range(0, 100, 7)))
    f = r.failures
    assert f is not None and (f.baseline_failed, f.candidate_failed) == (2, 15)
    assert f.p_value == two_sample.fisher_one_sided(98, 100, 85, 100) and f.blocks
    assert "cases with a failed trial rose from 2.0% (2 of 100 cases)" in r.reasons[0]
    r = compare_runs(base, window([{"exact_match": None}] * 10, "w3", failed=range(10)))
    assert r.coverage is not None and r.coverage.answered_none and r.blocked
    assert "the candidate answered none of its 10 cases" in " ".join(r.reasons)


def test_tiny_samples_are_underpowered_with_exit_3(
    window: Make, cli: Callable[..., Any], tmp_path: Path
) -> None:
    # 3 cases each, from 100% to 0%: the smallest possible p, 1 / C(6, 3) = 0.05, is above
    # alpha / 3, so no drop can be detected at all
    base, cand = window(_em(3, 3), "w1"), window(_em(3, 0), "w2")
    out = tmp_path / "v.json"
    proc = cli("gate", base, cand, "--json", out)
    assert proc.returncode == EXIT_UNDERPOWERED, proc.stdout + proc.stderr
    v = json.loads(out.read_text())
    assert v["underpowered"] and v["scorers"][0]["min_detectable_drop"] is None
    assert v["scorers"][0]["p_value"] == pytest.approx(0.05)
    assert "underpowered: on 3 baseline and 3 candidate cases" in proc.stdout
    # 5 and 5: a drop from 100% to 0% gives p = 1/252, and at a baseline rate of 100% the
    # power to detect a drop to 0 is 1: not underpowered, and this one blocks
    r = compare_runs(window(_em(5, 5), "w3"), window(_em(5, 0), "w4"))
    assert not r.underpowered and r.blocked
    assert r.scorers[0].min_detectable_drop == pytest.approx(0.8 ** (1 / 5), abs=1e-3)
    proc = cli("gate", base, cand, "--allow-underpowered")
    assert proc.returncode == EXIT_OK and "allowed by --allow-inconclusive" in proc.stdout


def test_markdown_comment_has_the_unpaired_statistics_and_no_live_mention(window: Make) -> None:
    outcomes = [{"no_leak": 0.0 if i == 0 else 1.0, "exact_match": 1.0} for i in range(60)]
    base = window([{"no_leak": 1.0, "exact_match": 1.0}] * 60, "w1", scorers=SAFETY)
    cand = write_run(
        base.parent / "mentions",
        outcomes,
        ids=["@acme/ops"] + [f"w2-{i}" for i in range(1, 60)],
        sha256="w2",
        scorers=SAFETY,
    )
    text = render_gate_markdown(compare_runs(base, cand))
    assert text.startswith("### agenteval gate: BLOCKED")
    for needle in ("**unpaired**", "cases (base/cand)", "min drop (80% power)", "Fisher"):
        assert needle in text, needle
    assert f"@{ZWJ}acme/ops" in text and "@acme" not in text


def test_a_baseline_without_spread_does_not_claim_any_drop_is_detectable(window: Make) -> None:
    """Every baseline value equal: the minimum detectable drop uses both runs' spread
    instead of reporting 0 (which would say even a 0.001 drop blocks reliably)."""
    base = window([{"graded_f": 1.0} for _ in range(40)], "w1")
    cand = window([{"graded_f": 1.0 if i % 2 else 0.5} for i in range(40)], "w2")
    r = compare_runs(base, cand)
    (g,) = [c for c in r.scorers if c.scorer == "graded_f"]
    assert g.min_detectable_drop is not None and g.min_detectable_drop > 0.1
