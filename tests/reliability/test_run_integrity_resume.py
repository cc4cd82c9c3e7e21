"""Nothing mixed or doubled: ``--resume`` continues only the same run, one writer at a time.

Real ``agenteval`` subprocesses, a Python agent that logs every call (``_integrity_agent``)
and real MCP start-up failures.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from reliability_support import (
    agenteval_cmd,
    cli_env,
    no_traceback,
    read_trials,
    record_figures,
    run_cli,
    tree_bytes,
    write_jsonl,
)

pytestmark = pytest.mark.reliability

AGENT = "_integrity_agent:answer"
N = 12


def _cases(d: Path, n: int = N) -> Path:
    return write_jsonl(
        d / "cases.jsonl", [{"id": f"c{i}", "input": f"q{i}", "expected": "ok"} for i in range(n)]
    )


def _one_error_line(stderr: str, *needles: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("agenteval: error: "), stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert no_traceback([stderr])
    return lines[0]


def _calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()]


def _wait_for(ready: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _half_run(tmp_path: Path, *extra: str) -> tuple[Path, Path, list[str]]:
    """A run of N cases x 2 repeats (plus ``extra``) killed after 4 trials; its argv."""
    cases = _cases(tmp_path)
    out = tmp_path / "run"
    argv = ["run", str(cases), "--agent", AGENT, "--out", str(out), "--quiet"]
    argv += ["--repeats", "2", "--concurrency", "1", *extra]
    env = cli_env({"INTEGRITY_DELAY": "0.05"})
    proc = subprocess.Popen(agenteval_cmd(*argv), env=env, stderr=subprocess.DEVNULL)
    trials = out / "trials.jsonl"
    _wait_for(lambda: trials.exists() and trials.read_bytes().count(b"\n") >= 4)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return cases, out, argv


CHANGES: list[tuple[dict[str, str | None], str]] = [
    ({"--repeats": "3"}, "the run was made with repeats=2; now repeats=3"),
    ({"--limit": "5"}, "the run was made with limit=none; now limit=5"),
    ({"--agent": "_integrity_agent:other"}, "agent.target=_integrity_agent:answer;"),
    ({"--no-builtin-scorers": None}, "the run was made with scorers=avoids_forbidden_text,"),
    ({"--repeats": "1", "--limit": "3"}, "repeats=2, limit=none; now repeats=1, limit=3"),
]


def test_resume_with_a_different_definition_is_refused_and_appends_nothing(
    tmp_path: Path,
) -> None:
    """The bug: ``--resume`` accepted another agent, --repeats, scorers or --limit and the
    run became a mix its run.json did not describe."""
    _, out, argv = _half_run(tmp_path)
    before = tree_bytes(out)
    for change, message in CHANGES:
        changed = list(argv)
        for opt, value in change.items():
            if opt in changed:
                changed[changed.index(opt) + 1] = str(value)
            else:
                changed += [opt] if value is None else [opt, value]
        r = run_cli(*changed, "--resume")
        assert r.returncode == 2, r.stderr
        _one_error_line(r.stderr, f"{out}: --resume: ", message)
        assert tree_bytes(out) == before, change


def test_resume_may_change_how_the_run_is_worked(tmp_path: Path) -> None:
    """Concurrency, timeouts, retries, prices and the display may differ on resume; the
    resumed run holds every trial once and its run.json keeps the first values."""
    _, out, argv = _half_run(tmp_path)
    first = json.loads((out / "run.json").read_text())
    prices = tmp_path / "prices.yaml"
    prices.write_text("m:\n  input: 1.0\n  output: 2.0\n")
    r = run_cli(
        *argv, "--resume", "--concurrency", "4", "--timeout", "30", "--max-retries", "1",
        "--retry-base", "0.1", "--request-timeout", "9", "--prices", prices,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    keys = Counter((t["case_id"], t["repeat"]) for t in read_trials(out))
    assert len(keys) == N * 2 and set(keys.values()) == {1}
    header = json.loads((out / "run.json").read_text())
    assert header["fingerprint"] == first["fingerprint"]
    assert header["settings"]["concurrency"] == 1 and header["prices"] == first["prices"]


def test_resume_of_a_run_not_made_by_run_is_refused(tmp_path: Path) -> None:
    cases = _cases(tmp_path, 2)
    trials = write_jsonl(tmp_path / "t.jsonl", [{"case_id": "c0", "output": "ok"}])
    out = tmp_path / "scored"
    assert run_cli("score", cases, trials, "--out", out, "--quiet").returncode == 0
    before = tree_bytes(out)
    r = run_cli("run", cases, "--agent", AGENT, "--out", out, "--resume")
    assert r.returncode == 2
    _one_error_line(r.stderr, "this one was made by 'agenteval score'")
    assert tree_bytes(out) == before


def test_one_writer_per_run_resumes_never_double_a_trial(tmp_path: Path) -> None:
    """The bug: two --resume at once (or a resume while the first run still ran) both called
    the agent for the same trials; trials.jsonl got duplicates and every later command on
    the run exited 2.

    The agent waits while a hold file exists, so each writer is provably mid-run while the
    other process tries, however slow the machine is."""
    cases = _cases(tmp_path)
    out = tmp_path / "run"
    log = tmp_path / "calls.jsonl"
    hold = tmp_path / "hold"
    hold.touch()
    argv = ["run", str(cases), "--agent", AGENT, "--out", str(out), "--quiet"]
    argv += ["--repeats", "2", "--concurrency", "2"]
    env = cli_env({"INTEGRITY_CALLS": str(log), "INTEGRITY_HOLD": str(hold)})
    first = subprocess.Popen(agenteval_cmd(*argv), env=env, stderr=subprocess.DEVNULL)
    _wait_for(lambda: len(_calls(log)) >= 1)  # the first run is calling the agent
    r = subprocess.run(
        agenteval_cmd(*argv, "--resume"), env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2, r.stderr
    line = _one_error_line(
        r.stderr, f"{out}: another agenteval process is writing this run (pid {first.pid},"
    )
    assert "'agenteval run'" in line and "started 20" in line
    first.send_signal(signal.SIGKILL)
    first.wait()
    # two resumes at once: one continues, the other is refused
    procs = [
        subprocess.Popen(
            agenteval_cmd(*argv, "--resume"), env=env, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    _wait_for(lambda: any(p.poll() is not None for p in procs), timeout=120)
    hold.unlink()  # now let the winner finish
    errs = [p.communicate(timeout=120)[1] for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 2], errs
    loser = procs[codes.index(2)]
    _one_error_line(errs[codes.index(2)], "another agenteval process is writing this run")
    assert no_traceback(errs)
    recorded = Counter((t["case_id"], t["repeat"]) for t in read_trials(out))
    assert len(recorded) == N * 2 and set(recorded.values()) == {1}
    by_pid = Counter(c["pid"] for c in _calls(log))
    assert by_pid[loser.pid] == 0, by_pid  # the refused process never called the agent
    assert set(by_pid) <= {first.pid, procs[0].pid, procs[1].pid}
    # every later command on the run works
    assert run_cli("report", out).returncode == 0
    assert run_cli("rescore", out, "--out", tmp_path / "re", "--quiet").returncode == 0
    record_figures(
        "one_writer",
        {"agent_calls_by_process": [by_pid[first.pid], *(by_pid[p.pid] for p in procs)]},
    )


def test_fresh_runs_racing_for_one_new_out_give_one_run_and_clean_refusals(
    tmp_path: Path,
) -> None:
    """The bug: two fresh runs into one new --out sometimes ended in a traceback."""
    cases = _cases(tmp_path, 4)
    outcomes: Counter[int] = Counter()
    for attempt in range(2):
        out = tmp_path / f"new{attempt}" / "run"
        argv = agenteval_cmd("run", cases, "--agent", AGENT, "--out", out, "--quiet")
        procs = [
            subprocess.Popen(argv, env=cli_env(), stderr=subprocess.PIPE, text=True)
            for _ in range(3)
        ]
        errs = [p.communicate(timeout=120)[1] for p in procs]
        codes = sorted(p.returncode for p in procs)
        outcomes.update(codes)
        assert codes == [0, 2, 2], errs
        for p, err in zip(procs, errs, strict=True):
            if p.returncode == 2:
                _one_error_line(err, str(out))
        assert len(read_trials(out)) == 4
        assert json.loads((out / "run.json").read_text())["summary"]["trials"] == 4
    record_figures("fresh_run_race", {"attempts": 2, "processes": 6, "exit_codes": outcomes})


def test_lock_is_released_when_the_writer_is_killed(tmp_path: Path) -> None:
    """A SIGKILLed writer leaves its lock file, never a lock: --resume continues at once."""
    _, out, argv = _half_run(tmp_path)
    assert (out / "run.lock").exists()
    r = run_cli(*argv, "--resume")
    assert r.returncode == 0, r.stderr
    assert len(read_trials(out)) == N * 2


MCP_FAIL = ["--agent", "tool-loop", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"]
MCP_FAIL += ["--mcp", "definitely-not-a-command-xyz --flag"]


@pytest.mark.parametrize("existed", [False, True])
def test_an_agent_that_fails_to_start_leaves_nothing_that_blocks_the_next_run(
    tmp_path: Path, existed: bool
) -> None:
    """The bug: an MCP server that failed to start left an empty run directory that
    blocked the next run. Now the run directory is removed if the run created it, or
    emptied of our files if it was an empty directory before."""
    pytest.importorskip("mcp")
    cases = _cases(tmp_path, 3)
    out = tmp_path / "runs" / "r"
    if existed:
        out.mkdir(parents=True)
    r = run_cli("run", cases, *MCP_FAIL, "--out", out, "--quiet")
    assert r.returncode == 2, r.stderr
    _one_error_line(r.stderr, "definitely-not-a-command-xyz")
    assert out.exists() == existed
    if existed:
        assert os.listdir(out) == []
    r = run_cli("run", cases, "--agent", AGENT, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert len(read_trials(out)) == 3
