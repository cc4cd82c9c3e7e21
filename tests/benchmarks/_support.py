"""Helpers for the benchmark tests: the real CLI in a subprocess, run directories read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def env(cache: Path) -> dict[str, str]:
    """Subprocess environment: scripted agent importable, database cache in ``cache``."""
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e.update({"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    e["AGENTEVAL_CACHE_DIR"] = str(cache)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return e


def run_cmd(*args: str) -> list[str]:
    """``agenteval run ARGS`` with the real CLI."""
    return [sys.executable, "-m", "agenteval", "run", *args]


def agenteval(*args: str, cache: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m agenteval ARGS`` and wait."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        capture_output=True,
        text=True,
        env=env(cache),
        timeout=timeout,
        check=False,
    )


def run_bench(*args: str, cache: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``agenteval run ARGS`` and wait."""
    return subprocess.run(
        run_cmd(*args), capture_output=True, text=True, env=env(cache), timeout=timeout, check=False
    )


def scores(run_dir: Path) -> dict[str, dict[str, Any]]:
    """``{case_id: {scorer: score dict}}`` of a run directory."""
    out: dict[str, dict[str, Any]] = {}
    with (run_dir / "trials.jsonl").open(encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            out[t["case_id"]] = t["scores"]
    return out


def values(run_dir: Path, scorer: str) -> dict[str, float | None]:
    """``{case_id: value}`` of one scorer."""
    return {cid: s[scorer]["value"] for cid, s in scores(run_dir).items() if scorer in s}
