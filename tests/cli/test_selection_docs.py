"""docs/selection.md runs as written: every console block's commands, in a copy of
docs/examples/selection/, print the lines the page shows (``…`` elides)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from agenteval.rundir import read_header

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "selection.md"
EXAMPLE = ROOT / "docs" / "examples" / "selection"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def _steps() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown after it), in page order."""
    steps: list[tuple[str, list[str]]] = []
    for block in _blocks("console"):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif line.strip() and line.strip() != "…":
                steps[-1][1].append(line)
    return steps


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_command_of_the_page_prints_what_it_shows(tmp_path: Path) -> None:
    work = tmp_path / "selection"
    shutil.copytree(EXAMPLE, work)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "200",
    }
    env.pop("PROMPT", None)
    steps = _steps()
    assert len(steps) >= 8
    for command, shown in steps:
        r = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
        out = _flat(r.stdout + "\n" + r.stderr)
        assert "Traceback" not in out, command
        for line in shown:
            assert _flat(line) in out, (
                f"{command}\n  shows: {line}\n  printed:\n{r.stdout}{r.stderr}"
            )
        if any("agenteval: error" in x for x in shown):
            assert r.returncode == 2, command
        elif any("BLOCKED" in x for x in shown):
            assert r.returncode == 1, command

    # the settings.selection the page shows is the one written
    (shown_json,) = _blocks("json")
    assert read_header(work / "runs" / "gold-fees").settings["selection"] == json.loads(shown_json)
    # the matrix file the page shows is the example's
    (shown_yaml,) = _blocks("yaml")
    assert yaml.safe_load(shown_yaml) == yaml.safe_load((EXAMPLE / "matrix.yaml").read_text())
    assert read_header(work / "runs" / "prompts" / "v1").settings["matrix"] == {
        "name": "prompts",
        "cell": "v1",
        "cells": ["v1", "v2"],
    }
