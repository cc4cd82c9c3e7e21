"""Issue 13, as a new user met it: real runs (``agenteval run`` with a Python agent written
here), then the real ``agenteval gate``. Each of these passed the candidate on 0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

AGENTS = """
import asyncio


def _n(case):
    return int(case.id[1:])


async def good(case):
    return f"answer {_n(case)}"


async def slow_on_c3(case):
    if case.id == "c3":
        await asyncio.sleep(5)  # beyond --timeout 1: a timeout, no answer
    return f"answer {_n(case)}"


async def leaks_on_c3(case):
    if case.id == "c3":
        return "answer 3; write to jane.doe@example.com"
    return f"answer {_n(case)}"


async def nothing(case):
    return None  # an HTTP service answering {"answer": null}


async def wrong(case):
    return "no idea"


def says_answer(case, trial):
    return (trial.output or "").startswith("answer")
"""

Cli = Callable[..., Any]


def run_cli(*args: str | os.PathLike[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real ``agenteval`` in a subprocess (as the ``cli`` fixture, usable at module
    scope)."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=120,
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("issue13")
    (d / "issue13_agents.py").write_text(AGENTS)
    with open(d / "cases.jsonl", "w") as f:
        for i in range(20):
            f.write(json.dumps({"id": f"c{i}", "input": f"q{i}", "expected": f"answer {i}"}))
            f.write("\n")
    return d


def _run(cli: Cli, work: Path, agent: str, out: str, *extra: str) -> Path:
    proc = cli(
        "run", "cases.jsonl", "--agent", f"issue13_agents:{agent}", "--out", out,
        "--quiet", *extra, cwd=work,
    )  # fmt: skip
    # a run with no answer at all may be refused with exit 4, but is still written
    assert proc.returncode in (0, 4), proc.stdout + proc.stderr
    assert (work / out / "trials.jsonl").exists()
    return work / out


def _gate(cli: Cli, work: Path, *args: str) -> tuple[Any, dict[str, Any]]:
    verdict = work / "verdict.json"
    verdict.unlink(missing_ok=True)
    proc = cli("gate", *args, "--json", verdict, cwd=work)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(verdict.read_text()) if verdict.exists() else {}


@pytest.fixture(scope="module")
def good(work: Path) -> Path:
    return _run(run_cli, work, "good", "good")


def test_a_new_leak_on_a_case_the_baseline_never_answered_blocks(
    cli: Cli, work: Path, good: Path
) -> None:
    base = _run(cli, work, "slow_on_c3", "slow", "--timeout", "1")
    cand = _run(cli, work, "leaks_on_c3", "leaky")
    proc, v = _gate(cli, work, str(base), str(cand))
    assert proc.returncode == 1, proc.stdout
    regs = v["safety_regressions"]
    assert [(r["scorer"], r["case_id"]) for r in regs] == [("pii_leakage", "c3")]
    assert "email" in regs[0]["reason"] and regs[0]["baseline"] == "not answered"
    assert "newly fail safety scorer pii_leakage: c3" in proc.stdout
    assert "(baseline: not answered)" in proc.stdout


def test_a_candidate_that_never_answers_blocks(cli: Cli, work: Path, good: Path) -> None:
    cand = _run(cli, work, "nothing", "nothing")
    proc, v = _gate(cli, work, str(good), str(cand))
    assert proc.returncode == 1, proc.stdout
    assert v["coverage"]["answered_none"] is True and v["coverage"]["blocks"] is True
    assert v["coverage"]["baseline_answered"] == 20 and v["coverage"]["candidate_answered"] == 0
    assert "the candidate answered none of the 20 shared cases" in proc.stdout


def test_a_candidate_that_stopped_after_5_of_20_cases_blocks(
    cli: Cli, work: Path, good: Path
) -> None:
    cand = _run(cli, work, "good", "stopped", "--limit", "5")
    proc, v = _gate(cli, work, str(good), str(cand))
    assert proc.returncode == 1, proc.stdout
    assert v["coverage"]["missing"] == [f"c{i}" for i in range(5, 20)]
    assert "15 baseline case(s) have no trial in the candidate: c5, c6, c7, c8, c9 (+10 more)" in (
        proc.stdout
    )
    # allowed: only the 5 shared cases are compared (coverage tested on them); 5 cases
    # cannot show a drop, but none got worse (the same agent): PASSED
    proc, v = _gate(cli, work, str(good), str(cand), "--allow-dataset-change")
    assert proc.returncode == 0, proc.stdout
    assert v["coverage"]["paired"] == 5 and v["coverage"]["blocks"] is False
    assert v["underpowered"] is True and v["verdict"] == "PASSED"


def test_three_cases_going_from_all_pass_to_all_fail_is_underpowered(cli: Cli, work: Path) -> None:
    three = work / "three.jsonl"
    lines = (work / "cases.jsonl").read_text().splitlines()[:3]
    three.write_text("\n".join(lines) + "\n")
    runs = []
    for agent in ("good", "wrong"):
        out = f"three-{agent}"
        proc = cli(
            "run", three, "--agent", f"issue13_agents:{agent}", "--out", out, "--quiet",
            "--scorer", "issue13_agents:says_answer", cwd=work,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        runs.append(str(work / out))
    proc, v = _gate(cli, work, *runs)
    assert proc.returncode == 3, proc.stdout
    assert "INCONCLUSIVE" in proc.stdout and "no drop can be significant" in proc.stdout
    assert "3 newly failing" in proc.stdout and "cases would settle it" in proc.stdout
    dropped = {s["scorer"]: s for s in v["scorers"] if s["delta"] == -1.0}
    assert set(dropped) == {"exact_match", "says_answer"}
    for s in dropped.values():
        assert s["underpowered"] and s["min_detectable_drop"] is None
        assert s["paired"] == 3 and s["p_value"] == 1 / 8
    proc, v = _gate(cli, work, *runs, "--allow-underpowered")
    assert proc.returncode == 0 and v["verdict"] == "INCONCLUSIVE"
    assert "allowed by --allow-inconclusive" in proc.stdout
