"""Ctrl-C during ``agenteval run``: finished trials kept, summary written, exit 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval.rundir import iter_trials, read_header
from fake_server_util import fake_server_process


@pytest.fixture(scope="module")
def slow_server() -> Iterator[str]:
    with fake_server_process(400) as url:
        yield url


def _start(tmp: Path, server: str, *extra: str) -> tuple[subprocess.Popen[str], Path, Path]:
    ds = tmp / "cases.jsonl"
    ds.write_text("".join(json.dumps({"id": f"c{i}", "input": f"q{i}"}) + "\n" for i in range(200)))
    out = tmp / "run"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            str(ds),
            "--endpoint",
            server,
            "--model",
            "m",
            "--out",
            str(out),
            "--concurrency",
            "4",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    trials = out / "trials.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if trials.exists() and trials.read_text().count("\n") >= 4:
            break
        time.sleep(0.05)
    return p, ds, out


def test_one_ctrl_c_finishes_in_flight_trials_and_exits_130(
    tmp_path: Path, slow_server: str
) -> None:
    p, _, out = _start(tmp_path, slow_server)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "finishing trials in flight" in stderr
    assert "Traceback" not in stderr
    trials = list(iter_trials(out))
    assert 4 <= len(trials) < 200
    assert all(t.failure is None for t in trials)  # in-flight ones finished normally
    summary = read_header(out).summary
    assert summary is not None and summary["trials"] == len(trials)
    assert "Scores" in stdout


def test_two_ctrl_c_record_cancelled_trials_which_resume_runs_again(
    tmp_path: Path, slow_server: str
) -> None:
    p, ds, out = _start(tmp_path, slow_server)
    p.send_signal(signal.SIGINT)
    time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    trials = list(iter_trials(out))
    cancelled = [t for t in trials if t.failure and t.failure.cause == "cancelled"]
    assert cancelled, "the trials in flight were recorded as cancelled"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            str(ds),
            "--endpoint",
            slow_server,
            "--model",
            "m",
            "--out",
            str(out),
            "--concurrency",
            "50",
            "--resume",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "cancelled trial(s) will run again" in r.stderr
    final = list(iter_trials(out))
    assert sorted(t.key for t in final) == sorted((f"c{i}", 0) for i in range(200))
    assert not [t for t in final if t.failure]
