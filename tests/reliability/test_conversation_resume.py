"""A conversation cut by SIGKILL or Ctrl-C is never half-recorded; --resume runs it again
whole, from its first turn (issue 18). A conversation that failed keeps its turns so far
and is recorded once. Real ``agenteval`` subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import agenteval_cmd, cli_env, no_traceback, read_trials, write_jsonl

pytestmark = pytest.mark.reliability

AGENT = "_conversation_agent:answer"


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the agent never reached the slow turn"
        time.sleep(0.02)


def _calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("how", ["sigkill", "ctrl-c-twice"])
def test_cut_conversation_is_rerun_whole_on_resume(tmp_path: Path, how: str) -> None:
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": "fast", "turns": ["a", "b"]},
            {"id": "boom", "turns": ["p", "q", "r"]},
            {"id": "slow", "turns": ["x", "y", "z"]},
        ],
    )
    out, log, mark = tmp_path / "run", tmp_path / "calls.jsonl", tmp_path / "mark"
    env = cli_env({"CONV_LOG": str(log), "CONV_MARK": str(mark), "CONV_SLEEP": "60"})
    argv = agenteval_cmd("run", cases, "--agent", AGENT, "--out", out, "--concurrency", "1")
    proc = subprocess.Popen(
        argv, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _wait_for(mark, proc)  # slow's first turn is done, its second is under way
    if how == "sigkill":
        proc.kill()
    else:
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (-signal.SIGKILL if how == "sigkill" else 130), err
    lines = read_trials(out)  # every line whole
    recorded = {(t["case_id"], (t.get("failure") or {}).get("cause")) for t in lines}
    if how == "sigkill":
        assert recorded == {("fast", None), ("boom", "agent_error")}  # nothing of slow
    else:  # recorded as cancelled (kept for the report, dropped and re-run by --resume)
        assert recorded == {("fast", None), ("boom", "agent_error"), ("slow", "cancelled")}
        cut = next(t for t in lines if t["case_id"] == "slow")["metadata"]["conversation"]
        assert cut["ended"] == "failed"  # what was said before the cut is on the line
        assert [(t["user"], t.get("failed")) for t in cut["turns"]] == [("x", None), ("y", True)]
    boom = next(t for t in lines if t["case_id"] == "boom")
    assert boom["metadata"]["conversation"]["ended"] == "failed"
    assert [t["output"] for t in boom["metadata"]["conversation"]["turns"]] == [
        "answer to turn 0",
        None,
    ]
    first = [c for c in _calls(log) if c["case"] == "slow"]
    assert [c["turn"] for c in first] == [0, 1]

    env["CONV_SLEEP"] = "0"
    mark.unlink()
    again = subprocess.run(
        agenteval_cmd("run", cases, "--agent", AGENT, "--out", out, "--resume"),
        env=env, text=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert no_traceback([again.stdout, again.stderr, err])
    final = {t["case_id"]: t for t in read_trials(out)}
    assert len(read_trials(out)) == 3  # one line per (case, repeat): no duplicate
    slow = final["slow"]
    assert slow["failure"] is None
    assert slow["metadata"]["conversation"]["ended"] == "script_end"
    assert [t["user"] for t in slow["metadata"]["conversation"]["turns"]] == ["x", "y", "z"]
    assert final["boom"] == boom  # a failed trial is a result: kept, not run again
    # the resumed process ran the conversation from its first turn, under a new id
    rerun = [c for c in _calls(log) if c["case"] == "slow" and c["pid"] != first[0]["pid"]]
    assert [c["turn"] for c in rerun] == [0, 1, 2]
    assert {c["cid"] for c in rerun} != {c["cid"] for c in first}
    assert len({c["cid"] for c in rerun}) == 1
    resumed = {c["case"] for c in _calls(log) if c["pid"] == rerun[0]["pid"]}
    assert resumed == {"slow"}
    assert os.path.exists(out / "run.json")
