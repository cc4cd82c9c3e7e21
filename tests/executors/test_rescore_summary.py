"""``rescore --processes 2`` computes its summary from the workers' contributions (not by
reading the new run back): the same trials.jsonl bytes and the same summary as one process,
on a realistic run (bench/gen.py: failures, retries, graded scorers, tags) with judge scores
carried over, and on the repeats fixture."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from gen import write_rescore_run  # noqa: E402


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def _with_judge_scores(run: Path) -> None:
    """Give a third of the trials an LLM judge's score with usage (priced and unpriced
    models, some inconclusive): no scorer of the rescore produces it, so it is carried."""
    rng = random.Random(7)
    lines = (run / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        t = json.loads(line)
        if i % 3 == 0:
            usage = [
                {"model": rng.choice(["gpt-4o-mini", "my-judge"]), "input_tokens": 900 + i,
                 "output_tokens": 40 + i % 17},
            ]  # fmt: skip
            value = round(rng.random(), 3) if i % 9 else None
            t["scores"] = {
                **t.get("scores", {}),
                "judge_helpfulness": {
                    "status": "inconclusive" if value is None
                    else "passed" if value >= 0.5 else "failed",
                    "value": value, "reason": "judged",
                    "passed": None if value is None else value >= 0.5,
                    "threshold": 0.5, "usage": usage,
                },
            }  # fmt: skip
        out.append(json.dumps(t) + "\n")
    (run / "trials.jsonl").write_text("".join(out), encoding="utf-8")


def _same(src: Path, tmp: Path) -> dict[str, Any]:
    one, two = tmp / "one", tmp / "two"
    r1 = _cli("rescore", src, "--out", one, "--quiet")
    r2 = _cli("rescore", src, "--out", two, "--quiet", "--processes", "2")
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    assert (two / "trials.jsonl").read_bytes() == (one / "trials.jsonl").read_bytes()
    s1 = json.loads((one / "run.json").read_text())["summary"]
    s2 = json.loads((two / "run.json").read_text())["summary"]
    assert s1.pop("run_id") != s2.pop("run_id")  # each new run has its own id
    assert s2 == s1
    return s1


def test_realistic_run_with_judge_scores(tmp_path: Path) -> None:
    src = write_rescore_run(tmp_path / "src", 1500)
    _with_judge_scores(src)
    s = _same(src, tmp_path)
    assert s["trials"] == 1500 and s["failed"] > 0 and s["retries"]["total"] > 0
    assert s["scorers"]["judge_helpfulness"]["judge"] and s["cost"]["judge_unpriced_scores"] > 0
    assert not s["scorers"]["step_efficiency"]["binary"] and s["tags"]


@pytest.mark.parametrize("run", ["repeats", "demo_sloppy"])
def test_fixture_runs(run: str, tmp_path: Path) -> None:
    s = _same(ROOT / "tests" / "fixtures" / "runs_v0_1" / run, tmp_path)
    assert s["trials"] > 0
