"""A candidate cannot pass the safety rule by silencing the safety check.

Before, a candidate whose safety scorer errored, was inconclusive (a judge that refuses to
read a leaking answer) or was not run at all on every case passed the gate: the scorer was
merely "not compared". Now it blocks when the scorer gave no result on any answered shared
case where it gave one in the baseline, and a note lists the cases when only some lost it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.cases.case import Case
from agenteval.errors import EXIT_BLOCKED, EXIT_OK
from agenteval.gate.paired import compare_runs
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score, inconclusive, not_applicable
from agenteval.trials.trial import Failure, Trial

N = 40
SAFETY = [{"name": "pii_leakage", "safety": True}, {"name": "exact_match"}]


def _pii(kind: str) -> Score | None:
    if kind == "pass":
        return Score(1.0, "no PII")
    if kind == "error":
        return Score(None, "scorer crashed", error="judge HTTP 500")
    if kind == "inconclusive":
        return inconclusive("the judge refused: I cannot help with that")
    if kind == "n/a":
        return not_applicable("nothing to check")
    return None  # not run


def _run(run_dir: Path, pii: list[str], *, failed: tuple[int, ...] = ()) -> Path:
    header = RunHeader.model_validate(
        {"dataset": DatasetRef(path="d.jsonl", sha256="same", cases=N), "scorers": SAFETY}
    )
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=f"c{i:02d}", input="q") for i in range(N)])
        for i, kind in enumerate(pii):
            fail = Failure(cause="timeout", message="slow") if i in failed else None
            scores = {"exact_match": Score(1.0, "ok")}
            s = None if fail else _pii(kind)
            if s is not None:
                scores["pii_leakage"] = s
            w.append(Trial(case_id=f"c{i:02d}", output=None if fail else "x", failure=fail), scores)
    return run_dir


@pytest.mark.parametrize("kind", ["error", "inconclusive", "missing"])
def test_a_safety_scorer_silenced_on_every_case_blocks(tmp_path: Path, kind: str) -> None:
    base = _run(tmp_path / "base", ["pass"] * N)
    cand = _run(tmp_path / "cand", [kind] * N)
    r = compare_runs(base, cand)
    assert r.blocked and r.exit_code == EXIT_BLOCKED
    assert r.safety_unchecked_blocks == ["pii_leakage"]
    assert len(r.safety_unchecked["pii_leakage"]) == N
    assert any("pii_leakage gave no result in the candidate" in x for x in r.reasons)


def test_partly_silenced_is_a_note_and_not_applicable_is_a_result(tmp_path: Path) -> None:
    base = _run(tmp_path / "base", ["pass"] * N)
    cand = _run(tmp_path / "cand", ["inconclusive"] * 3 + ["pass"] * (N - 3))
    r = compare_runs(base, cand)
    assert r.exit_code == EXIT_OK and r.safety_unchecked == {"pii_leakage": ["c00", "c01", "c02"]}
    assert any(
        "on 3 case(s) it was checked on in the baseline: c00, c01, c02" in n for n in r.notes
    )
    # the scorer deciding it does not apply is a result, not a silenced check
    r = compare_runs(base, _run(tmp_path / "na", ["n/a"] * N))
    assert r.safety_unchecked == {} and not r.safety_unchecked_blocks


def test_unanswered_cases_are_left_to_the_coverage_check(tmp_path: Path) -> None:
    # the only case the baseline checked timed out in the candidate: not "silenced"
    base = _run(tmp_path / "base", ["pass"] + ["n/a"] * (N - 1))
    cand = _run(tmp_path / "cand", ["pass"] + ["n/a"] * (N - 1), failed=(0,))
    r = compare_runs(base, cand)
    assert r.safety_unchecked == {} and not r.safety_unchecked_blocks


def test_the_command_blocks_and_says_why(tmp_path: Path) -> None:
    base = _run(tmp_path / "base", ["pass"] * N)
    cand = _run(tmp_path / "cand", ["inconclusive"] * N)
    env = {**os.environ}
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval", "gate", str(base), str(cand), "--json",
         str(tmp_path / "g.json")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == EXIT_BLOCKED, proc.stdout + proc.stderr
    assert "safety scorer pii_leakage gave no result in the candidate" in proc.stdout
    data = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "BLOCKED" and data["safety_unchecked_blocks"] == ["pii_leakage"]
