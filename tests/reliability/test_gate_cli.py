"""``agenteval gate`` command-line bugs: options that swallow paths, outputs that fail after
the verdict was printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_support import no_traceback, run_cli

from agenteval.cases.case import Case
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

pytestmark = pytest.mark.reliability


def _run(run_dir: Path, passed: list[bool]) -> Path:
    header = RunHeader(dataset=DatasetRef(path="d.jsonl", sha256="same", cases=len(passed)))
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=f"c{i}", input="q") for i in range(len(passed))])
        for i, ok in enumerate(passed):
            w.append(
                Trial(case_id=f"c{i}", output="x"),
                {"exact_match": Score(1.0 if ok else 0.0, "checked")},
            )
    return run_dir


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    base = _run(tmp_path / "base", [i < 180 for i in range(200)])
    cand = _run(tmp_path / "cand", [i < 170 for i in range(200)])  # a 5-point drop
    return base, cand


def test_max_drop_before_the_run_paths_does_not_swallow_them(pair: tuple[Path, Path]) -> None:
    base, cand = pair
    proc = run_cli("gate", "--max-drop", "exact_match=0.1", base, cand)
    assert proc.returncode == 0, proc.stderr
    assert "PASSED" in proc.stdout
    proc = run_cli("gate", "--max-drop", "exact_match=0.01", base, cand)
    assert proc.returncode == 1 and "BLOCKED" in proc.stdout


def test_unwritable_json_gives_one_line_and_exit_5_and_no_verdict(
    pair: tuple[Path, Path],
) -> None:
    base, cand = pair
    proc = run_cli("gate", base, cand, "--max-drop", "exact_match=0.1", "--json", "/dev/full")
    assert proc.returncode == 5
    assert proc.stdout == ""  # no PASSED printed before the failure
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--json /dev/full: cannot write" in lines[0]
    assert no_traceback([proc.stderr])


def test_json_into_a_missing_directory_is_input_error_before_comparing(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    base, cand = pair
    target = tmp_path / "no-such-dir" / "verdict.json"
    proc = run_cli("gate", base, cand, "--json", target)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"--json {target}: the folder to write into does not exist" in proc.stderr
    proc = run_cli("gate", base, cand, "--markdown", tmp_path)
    assert proc.returncode == 2 and "is a directory" in proc.stderr
    for victim in (base / "run.json", cand / "trials.jsonl"):
        before = victim.read_bytes()
        proc = run_cli("gate", base, cand, "--json", victim)
        assert proc.returncode == 2 and proc.stdout == ""
        assert f"is the run's own file {victim.name}" in proc.stderr
        assert victim.read_bytes() == before


def test_outputs_are_written_when_blocked(pair: tuple[Path, Path], tmp_path: Path) -> None:
    base, cand = pair
    j, m = tmp_path / "v.json", tmp_path / "v.md"
    proc = run_cli("gate", base, cand, "--json", j, "--markdown", m)
    assert proc.returncode == 1
    assert json.loads(j.read_text())["verdict"] == "BLOCKED"
    assert m.read_text().startswith("### agenteval gate: BLOCKED")
