"""Worker processes (``run --processes N``): lost workers, Ctrl-C, resume, unpicklable agents.

Every test runs the real ``agenteval run`` in a subprocess and kills real worker
processes (their pids are written by the agent, ``_worker_agent.py``). The trial set of
each run is compared with an uninterrupted one-process run: same (case, repeat) keys, each
once, same answers and same scores (timings ignored).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import agenteval_cmd, cli_env, no_traceback, run_cli, write_jsonl

from agenteval.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_WORKERS_LOST

pytestmark = pytest.mark.reliability

N_CASES = 40
REPEATS = 2


def _cases(tmp: Path, extra: list[dict[str, Any]] | None = None) -> Path:
    rows = [
        {"id": f"w{i:03d}", "input": f"item {i}", "expected": f"echo: item {i}"}
        for i in range(N_CASES)
    ]
    return write_jsonl(tmp / "cases.jsonl", rows + (extra or []))


def _trial_set(run: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    """(case, repeat) -> (answer, failure cause, scores); raises on a duplicate key."""
    out: dict[tuple[str, int], tuple[Any, ...]] = {}
    for line in (run / "trials.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        key = (t["case_id"], t["repeat"])
        assert key not in out, f"duplicate trial {key}"
        scores = {k: (v.get("value"), v.get("status")) for k, v in t["scores"].items()}
        out[key] = (t["output"], (t.get("failure") or {}).get("cause"), scores)
    return out


def _env(pids: Path, sleep: float) -> dict[str, str]:
    pids.mkdir(exist_ok=True)
    return cli_env({"WORKER_PIDS_DIR": str(pids), "WORKER_AGENT_SLEEP": str(sleep)})


def _lines(run: Path) -> int:
    try:
        return (run / "trials.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        agenteval_cmd(*args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell gives a job
    )


def _wait_for(cond: Any, proc: subprocess.Popen[str], what: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def _worker_pids(pids: Path, driver: int) -> list[int]:
    return sorted(int(p.name) for p in pids.iterdir() if int(p.name) != driver)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], tuple[Any, ...]]:
    """The trial set of an uninterrupted run in one process."""
    tmp = tmp_path_factory.mktemp("ref")
    cases = _cases(tmp)
    r = run_cli(
        "run",
        cases,
        "--agent",
        "_worker_agent:answer",
        "--repeats",
        str(REPEATS),
        "--out",
        tmp / "ref",
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    ref = _trial_set(tmp / "ref")
    assert len(ref) == N_CASES * REPEATS
    return ref


def _run_args(cases: Path, out: Path, *more: str) -> list[str]:
    return [
        "run", str(cases), "--agent", "_worker_agent:answer", "--repeats", str(REPEATS),
        "--concurrency", "2", "--out", str(out), "--quiet", "--processes", "2", *more,
    ]  # fmt: skip


def test_sigkill_one_worker_mid_run_reruns_its_trials(
    tmp_path: Path, reference: dict[tuple[str, int], tuple[Any, ...]]
) -> None:
    out, pids = tmp_path / "run", tmp_path / "pids"
    proc = _start(_run_args(_cases(tmp_path), out), _env(pids, 0.03))
    _wait_for(lambda: _lines(out) >= 12, proc, "12 trials")
    victim = _worker_pids(pids, proc.pid)[0]
    os.kill(victim, signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert no_traceback([err])
    assert _trial_set(out) == reference  # the lost batch ran again, nothing twice
    assert victim in _worker_pids(pids, proc.pid)
    assert len(_worker_pids(pids, proc.pid)) >= 3  # the lost worker was replaced


def test_every_worker_lost_stops_with_one_line_and_resume_completes(
    tmp_path: Path, reference: dict[tuple[str, int], tuple[Any, ...]]
) -> None:
    cases, out, pids = _cases(tmp_path), tmp_path / "run", tmp_path / "pids"
    env = _env(pids, 0.05)
    proc = _start(_run_args(cases, out), env)
    _wait_for(
        lambda: _lines(out) >= 8 and len(_worker_pids(pids, proc.pid)) >= 2, proc, "both workers"
    )
    for pid in _worker_pids(pids, proc.pid):
        os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_WORKERS_LOST, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("agenteval: error: every worker was lost"), err
    written = _trial_set(out)
    assert 8 <= len(written) < N_CASES * REPEATS
    r = subprocess.run(
        agenteval_cmd(*_run_args(cases, out, "--resume")),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert _trial_set(out) == reference


def test_ctrl_c_keeps_what_finished_and_resume_with_processes_completes(
    tmp_path: Path, reference: dict[tuple[str, int], tuple[Any, ...]]
) -> None:
    cases, out, pids = _cases(tmp_path), tmp_path / "run", tmp_path / "pids"
    env = _env(pids, 0.05)
    proc = _start(_run_args(cases, out), env)
    _wait_for(lambda: _lines(out) >= 10, proc, "10 trials")
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the driver and its workers
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert no_traceback([err])
    workers = _worker_pids(pids, proc.pid)
    assert workers and not any(_alive(p) for p in workers)  # no worker left behind
    partial = _trial_set(out)
    assert 10 <= len(partial) < N_CASES * REPEATS
    assert all(reference[k] == v for k, v in partial.items())
    assert json.loads((out / "run.json").read_text())["summary"]["trials"] == len(partial)
    r = subprocess.run(
        agenteval_cmd(*_run_args(cases, out, "--resume")),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert _trial_set(out) == reference


def test_a_trial_that_kills_its_worker_is_recorded_as_worker_lost(
    tmp_path: Path, reference: dict[tuple[str, int], tuple[Any, ...]]
) -> None:
    poison = {"id": "poison", "input": "boom", "expected": "never"}
    cases, out = _cases(tmp_path, [poison]), tmp_path / "run"
    args = _run_args(cases, out)
    args[args.index("_worker_agent:answer")] = "_worker_agent:poison"
    r = subprocess.run(
        agenteval_cmd(*args),
        env=_env(tmp_path / "pids", 0.01),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    got = _trial_set(out)
    for rep in range(REPEATS):
        output, cause, _ = got.pop(("poison", rep))
        assert (output, cause) == (None, "worker_lost")
    assert got == reference
    failures = [json.loads(x)["failure"] for x in (out / "trials.jsonl").read_text().splitlines()]
    lost = [f for f in failures if f]
    assert len(lost) == REPEATS and all("lost 3 times" in f["message"] for f in lost)


def test_unpicklable_agent_exits_2_with_one_line_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = run_cli(
        "run",
        _cases(tmp_path),
        "--agent",
        "_worker_agent:locked",
        "--processes",
        "2",
        "--out",
        out,
        "--quiet",
    )
    assert r.returncode == EXIT_INPUT
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(
        "agenteval: error: the agent '_worker_agent:locked' cannot be sent to worker processes"
        " (TypeError: cannot pickle '_thread.lock' object)"
    ), r.stderr
    assert "--agent module:make_agent" in lines[0]
    assert not out.exists()  # refused before the run directory is made


def test_factory_builds_the_agent_once_per_worker(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = run_cli(
        "run", _cases(tmp_path), "--agent", "_worker_agent:make_agent", "--processes", "2",
        "--out", out, "--quiet", env={"WORKER_AGENT_SLEEP": "0.01"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    trials = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    assert len(trials) == N_CASES and all(t["output"].startswith("echo: ") for t in trials)
    assert {t["metadata"]["factory_calls"] for t in trials} == {1}
    assert len({t["metadata"]["pid"] for t in trials}) == 2  # two workers, each built its own
    header = json.loads((out / "run.json").read_text())
    assert header["agent"] == {
        "kind": "python",
        "target": "_worker_agent:make_agent",
        "factory": True,
    }


def test_ctrl_c_twice_ends_the_workers_and_records_nothing_in_flight(
    tmp_path: Path, reference: dict[tuple[str, int], tuple[Any, ...]]
) -> None:
    cases, out, pids = _cases(tmp_path), tmp_path / "run", tmp_path / "pids"
    proc = _start(_run_args(cases, out), _env(pids, 0.5))  # a batch takes about a second
    _wait_for(lambda: _lines(out) >= 4, proc, "4 trials")
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert no_traceback([err])
    partial = _trial_set(out)
    assert all(cause is None for _, cause, _ in partial.values())  # nothing "cancelled"
    assert all(reference[k] == v for k, v in partial.items())
    assert not any(_alive(p) for p in _worker_pids(pids, proc.pid))
    env = _env(pids, 0)
    r = subprocess.run(
        agenteval_cmd(*_run_args(cases, out, "--resume")),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert _trial_set(out) == reference
