"""Helpers shared by the conversation tests: CLI subprocess runs and reading run dirs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The subprocess environment: this directory importable, no API keys, no colour."""
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.update({"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    e.update(extra or {})
    return e


def cmd(*args: Any) -> list[str]:
    return [sys.executable, "-m", "agenteval", *map(str, args)]


def run(*args: Any, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``agenteval ARGS`` in a subprocess, waited for."""
    return subprocess.run(cmd(*args), capture_output=True, text=True, env=env(extra), timeout=120)


def write_cases(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def trials(run_dir: Path) -> list[dict[str, Any]]:
    """Every line of trials.jsonl (a torn line raises)."""
    text = (run_dir / "trials.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def by_case(run_dir: Path) -> dict[tuple[str, int], dict[str, Any]]:
    out = {}
    for line in trials(run_dir):
        t = line.get("trial", line)
        out[(t["case_id"], t.get("repeat", 0))] = line
    return out
