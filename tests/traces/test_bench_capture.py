"""bench/capture.py runs end to end at a tiny size (it is not itself a test of speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "capture.py"


def test_capture_bench_prints_on_and_off_for_each_agent() -> None:
    agents = ["synthetic"]
    for name, module in (("pydantic-ai", "pydantic_ai"), ("langgraph", "langchain.agents")):
        try:
            __import__(module)
        except ImportError:
            continue
        agents.append(name)
    args = ["--agents", ",".join(agents), "--spans", "6", "--trials", "3", "--rounds", "1"]
    proc = subprocess.run(
        [sys.executable, str(BENCH), *args],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    assert list(result) == agents
    for name in agents:
        r = result[name]
        for unit in ("cpu", "wall"):
            us = r[f"{unit}_us_per_trial"]
            assert set(us) == {"no provider, capture off", "capture off", "capture on"}
            assert all(v > 0 for v in us.values()) and r[f"{unit}_ratio"] > 0
        assert r["calls_per_trial"] == (3 if name == "synthetic" else 2)
        assert any(line.startswith(name) for line in lines[:-1])


def test_capture_bench_rejects_an_unknown_agent() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--agents", "crewai"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown agents: crewai" in proc.stderr
