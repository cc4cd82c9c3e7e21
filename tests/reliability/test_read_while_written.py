"""``gate`` and ``report`` of a run another process is still writing (it holds the run's
lock) used to read the partial run silently. Now ``gate`` refuses (one line naming the
pid, exit 2) and ``report`` goes on with one stderr line saying it covers the trials
written so far."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability_support import cli_env, no_traceback, run_cli

from agenteval.cases.case import Case
from agenteval.errors import EXIT_INPUT, EXIT_OK
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

pytestmark = pytest.mark.reliability

HOLD = """
import sys
from agenteval.rundir.lock import RunLock
lock = RunLock.acquire(sys.argv[1], "agenteval run")
print("held", flush=True)
sys.stdin.read()
"""


def _run(run_dir: Path, n: int) -> Path:
    header = RunHeader.model_validate(
        {
            "dataset": DatasetRef(path="d.jsonl", sha256="same", cases=12),
            "scorers": [{"name": "ok"}],
        }
    )
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=f"c{i}", input="q") for i in range(12)])
        for i in range(n):
            w.append(Trial(case_id=f"c{i}", output="x"), {"ok": Score(1.0, "fine")})
    return run_dir


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Path, Path, int]]:
    """(a complete run, a run with 7 of 12 trials whose lock a live process holds, its pid)."""
    done, partial = _run(tmp_path / "done", 12), _run(tmp_path / "partial", 7)
    p = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(partial)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(None),
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        yield done, partial, p.pid
    finally:
        assert p.stdin is not None
        p.stdin.close()  # the holder exits and the OS frees the lock
        p.wait(timeout=30)


@pytest.mark.parametrize("which", ["baseline", "candidate"])
def test_gate_refuses_a_run_still_being_written(held: tuple[Path, Path, int], which: str) -> None:
    done, partial, pid = held
    pair = (partial, done) if which == "baseline" else (done, partial)
    p = run_cli("gate", *pair)
    assert p.returncode == EXIT_INPUT, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pid {pid}" in lines[0] and str(partial) in lines[0]
    assert "still being written" in lines[0]
    assert "verdict" not in p.stdout and no_traceback([p.stdout, p.stderr])


def test_report_says_it_covers_the_trials_so_far(held: tuple[Path, Path, int]) -> None:
    _, partial, pid = held
    p = run_cli("report", partial)
    assert p.returncode == EXIT_OK, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert f"run {partial} is still being written" in lines[0] and f"pid {pid}" in lines[0]
    assert "this report covers the 7 trials written so far" in lines[0]
    assert p.stdout.strip()  # the summary is still printed


def test_after_the_writer_ends_report_and_gate_are_quiet(tmp_path: Path) -> None:
    done, other = _run(tmp_path / "done", 12), _run(tmp_path / "other", 12)
    p = subprocess.run(
        [sys.executable, "-c", HOLD, str(other)], input="", text=True, env=cli_env(None)
    )
    assert p.returncode == 0  # held the lock, then exited
    r = run_cli("report", other)
    assert r.returncode == EXIT_OK and r.stderr == ""
    g = run_cli("gate", done, other)
    assert g.returncode != EXIT_INPUT, g.stderr
