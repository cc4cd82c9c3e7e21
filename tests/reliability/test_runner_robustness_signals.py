"""Signals and hung agents: the run stops when asked, summarises, and the process exits.

Real ``agenteval run`` subprocesses receive real signals.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability_support import agenteval_cmd, cli_env, no_traceback, read_trials, write_jsonl

from agenteval.rundir import read_header
from fake_server_util import fake_server_process

pytestmark = pytest.mark.reliability


def _start(
    tmp: Path, ids: list[str], agent: str, *extra: str
) -> tuple[subprocess.Popen[str], Path]:
    ds = write_jsonl(tmp / "cases.jsonl", [{"id": i, "input": f"q {i}"} for i in ids])
    out = tmp / "run"
    p = subprocess.Popen(
        agenteval_cmd("run", ds, "--agent", agent, "--out", out, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    return p, out


def _wait_for_trials(p: subprocess.Popen[str], out: Path, n: int, timeout: float = 60) -> None:
    trials = out / "trials.jsonl"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if trials.exists() and trials.read_bytes().count(b"\n") >= n:
            return
        assert p.poll() is None, p.communicate()
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} trials after {timeout} s")


def _summary_matches(out: Path) -> list[dict[str, object]]:
    trials = read_trials(out)
    summary = read_header(out).summary
    assert summary is not None, "the summary was written"
    assert summary["trials"] == len(trials)
    return trials


@pytest.mark.parametrize(
    ("sig", "code", "name"), [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP")]
)
def test_sigterm_and_sighup_stop_like_one_ctrl_c(
    tmp_path: Path, sig: signal.Signals, code: int, name: str
) -> None:
    """Bug: SIGTERM/SIGHUP killed the run on the spot: no summary, trials in flight lost."""
    p, out = _start(tmp_path, [f"c{i}" for i in range(200)], "_robust_agents:slow", "--quiet")
    _wait_for_trials(p, out, 4)
    p.send_signal(sig)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == code, stderr
    assert f"interrupted ({name}): finishing trials in flight" in stderr
    assert no_traceback([stderr])
    trials = _summary_matches(out)
    assert 4 <= len(trials) < 200
    assert all(t["failure"] is None for t in trials)  # those in flight finished


def test_a_second_sigterm_cancels_the_trials_in_flight(tmp_path: Path) -> None:
    p, out = _start(tmp_path, [f"c{i}" for i in range(200)], "_robust_agents:hangs_a_bit")
    _wait_for_trials(p, out, 2)
    p.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 143, stderr
    assert no_traceback([stderr])
    trials = _summary_matches(out)
    assert any(t["failure"] and t["failure"]["cause"] == "cancelled" for t in trials)


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[str]:
    with fake_server_process(600) as url:
        yield url


def test_ctrl_c_twice_cancels_judge_calls_and_records_them_inconclusive(
    tmp_path: Path, slow_judge: str
) -> None:
    """Bug: Ctrl-C twice while judge calls were in flight: traceback, exit 1, finished
    trials not summarised."""
    p, out = _start(
        tmp_path,
        [f"c{i}" for i in range(200)],
        "_robust_agents:quick",
        "--concurrency",
        "4",
        "--rubric",
        "answer_relevance",
        "--judge-endpoint",
        slow_judge,
        "--judge-model",
        "judge",
        "--no-judge-cache",
        "--quiet",
    )
    _wait_for_trials(p, out, 4)  # the first judged trials are written: others are judged now
    p.send_signal(signal.SIGINT)
    time.sleep(0.15)
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert no_traceback([stderr])
    trials = _summary_matches(out)
    cancelled = [
        t
        for t in trials
        if str(t["scores"]["judge_answer_relevance"]["reason"]).startswith(  # type: ignore[index]
            "inconclusive: cancelled"
        )
    ]
    assert cancelled, "the judge calls in flight were cancelled and recorded"
    for t in cancelled:
        assert t["output"] is not None  # the agent's answer is kept
        assert t["scores"]["judge_answer_relevance"]["value"] is None  # type: ignore[index]
        assert t["scores"]["judge_answer_relevance"]["status"] == "inconclusive"  # type: ignore[index]
    summary = read_header(out).summary
    assert summary is not None
    assert summary["inconclusive"]["judge_answer_relevance"] >= len(cancelled)  # type: ignore[index]


def test_a_hung_sync_agent_delays_no_other_case(tmp_path: Path) -> None:
    """Bug: a hung sync agent held a thread of the default pool (CPUs + 4 threads): the
    other, instant cases queued behind it and were recorded as ``timeout``, and the
    process never exited."""
    hung = [f"hang{i}" for i in range(34)]  # more than any default pool (min(32, CPUs + 4))
    quick = [f"ok{i}" for i in range(30)]
    ids = [x for pair in zip(hung, quick, strict=False) for x in pair] + hung[len(quick) :]
    p, out = _start(
        tmp_path, ids, "_robust_agents:hangs", "--concurrency", "36", "--timeout", "1", "--quiet"
    )
    try:
        _, stderr = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, stderr
    trials = {t["case_id"]: t for t in _summary_matches(out)}
    assert set(trials) == set(ids)
    for i in quick:
        assert trials[i]["failure"] is None, trials[i]["failure"]
        assert trials[i]["latency"]["total_s"] < 0.5  # type: ignore[index]
    for i in hung:
        assert trials[i]["failure"]["cause"] == "timeout"  # type: ignore[index]


def test_ctrl_c_twice_ends_a_run_whose_sync_agent_hangs(tmp_path: Path) -> None:
    """Bug: Ctrl-C could not stop a run whose sync agent hung (the process waited for the
    thread forever)."""
    ids = ["hang0", *(f"ok{i}" for i in range(5))]
    p, out = _start(tmp_path, ids, "_robust_agents:hangs", "--concurrency", "2", "--quiet")
    try:
        _wait_for_trials(p, out, 5)
        p.send_signal(signal.SIGINT)
        time.sleep(0.3)
        assert p.poll() is None  # still waiting for the hung trial
        p.send_signal(signal.SIGINT)
        _, stderr = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    assert no_traceback([stderr])
    trials = {t["case_id"]: t for t in _summary_matches(out)}
    assert trials["hang0"]["failure"]["cause"] == "cancelled"  # type: ignore[index]
    assert all(trials[f"ok{i}"]["failure"] is None for i in range(5))
