"""Matrices on the real command: one run per cell, the table, the gate, the viewer's groups."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.rundir import iter_trials, read_header
from agenteval.view import pages
from agenteval.view.catalog import Catalog


def run_cli(
    *args: str | os.PathLike[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``agenteval`` command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        timeout=300,
    )


N = 20
AGENT = f"""
import os

def answer(case):  # PROMPT=v2 answers every case; v1 only the first {N // 2}
    n = int(case.id[1:])
    return case.expected if os.environ.get("PROMPT") == "v2" or n < {N // 2} else "?"

def good(case):
    return case.expected

def bad(case):
    return "?"
"""


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    p = tmp_path / "cases.jsonl"
    rows = [{"id": f"c{i}", "input": f"q{i}", "expected": f"a{i}"} for i in range(N)]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "agent.py").write_text(AGENT)
    return p


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_several_agents_run_one_cell_each_then_the_table_and_the_gate(
    ds: Path, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    agent = ds.parent / "agent.py"
    r = run_cli("run", ds, "--agent", f"{agent}:good", "--agent", f"{agent}:bad", "--out", out,
                "--quiet", "--baseline-cell", "agent-good")  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr  # bad answers nothing right: blocked
    assert sorted(p.name for p in out.iterdir()) == ["agent-bad", "agent-good"]
    for cell in ("agent-good", "agent-bad"):
        h = read_header(out / cell)
        assert h.settings["matrix"] == {
            "name": "m",
            "cell": cell,
            "cells": ["agent-good", "agent-bad"],
        }
        assert h.agent is not None and h.agent["target"].endswith(f"agent.py:{cell[6:]}")
        assert len(list(iter_trials(out / cell))) == N
    text = _flat(r.stdout)
    assert "matrix m: 2 cells under" in text
    assert "Runs side by side" in text
    assert "100.0% [83.9–100.0%] n=20" in text and "0.0% [0.0–16.1%] n=20" in text
    assert "tool_selection" not in text  # applied to no case: left out
    assert "gate agent-good → agent-bad: BLOCKED" in text
    assert "run written to" not in r.stdout  # --quiet: only the matrix's table

    # the viewer groups the cells of the matrix, labelled by their targets
    runs = list(Catalog(tmp_path).scan(force=True).values())
    for run in runs:
        run.refresh()  # what the runs page does before listing
    rows = pages.run_rows(runs)
    (key, group), *_ = rows.items()
    assert key.startswith("matrix:m:") and [row.cell for row in group] == [
        "agent-good",
        "agent-bad",
    ]
    assert group[0].agent.endswith("agent.py:good") and group[1].agent.endswith("agent.py:bad")
    html = pages.render("runs.html.j2", root=str(tmp_path), rows=rows)
    assert "Matrix <code>m</code>" in html and "cell agent-bad" in html


def test_a_matrix_file_with_env_and_the_gate_exit_code(ds: Path, tmp_path: Path) -> None:
    agent = ds.parent / "agent.py"
    spec = tmp_path / "prompts.yaml"
    spec.write_text(
        "baseline: PROMPT-v2\n"
        "axes:\n"
        f"  agent: ['{agent}:answer']\n"
        "  env: [{PROMPT: v1}, {PROMPT: v2}]\n"
    )
    r = run_cli("run", ds, "--matrix", spec, "--out", tmp_path / "a", "--quiet")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "gate PROMPT-v2 → PROMPT-v1: BLOCKED" in _flat(r.stdout)

    spec.write_text(
        "baseline: v2\n"
        "cells:\n"
        f"  - {{name: v1, agent: '{agent}:answer', env: {{PROMPT: v1}}}}\n"
        f"  - {{name: v2, agent: '{agent}:answer', env: {{PROMPT: v2}}}}\n"
    )
    r = run_cli("run", ds, "--matrix", spec, "--out", tmp_path / "m", "--quiet")
    text = _flat(r.stdout)
    # v1 fails 10 of the 20 cases v2 passes: McNemar p = 2^-10, below 0.05/4: blocked
    assert r.returncode == 1, r.stdout + r.stderr
    assert "matrix prompts: 2 cells" in text and "gate v2 → v1: BLOCKED" in text
    assert "50.0% [" in text and "100.0% [" in text
    assert read_header(tmp_path / "m" / "v1").settings["matrix"]["name"] == "prompts"


def test_without_a_baseline_the_exit_code_is_the_runs(ds: Path, tmp_path: Path) -> None:
    agent = ds.parent / "agent.py"
    r = run_cli("run", ds, "--agent", f"{agent}:good", "--agent", f"{agent}:bad",
                "--out", tmp_path / "m", "--quiet", "--max-failure-rate", "0")  # fmt: skip
    assert r.returncode == 0, r.stderr  # wrong answers are not failed trials
    assert "gate" not in _flat(r.stdout).split("Runs side by side")[1]


@pytest.mark.parametrize(
    ("spec", "extra", "message"),
    [
        (None, ["--baseline-cell", "nope"], "field '--baseline-cell': no cell named 'nope';"
         " the cells are agent-good, agent-bad"),
        ("cells: []\n", [], "cells: must be a non-empty list"),
        ("cells: [{name: a, modle: x}]\n", [], "cells[0]: unknown key 'modle'"),
        ("cells: [{name: a}, {name: a}]\n", [], "two cells are named 'a'"),
        ("cells: [{name: '../x'}]\n", [], "is not a folder name"),
        ("axes: {model: [a]}\ncells: [{name: a}]\n", [], "give 'axes'"),
        ("[1, 2]\n", [], "a matrix file is a mapping"),
    ],
)  # fmt: skip
def test_bad_matrices_exit_2_before_any_cell_runs(
    ds: Path, tmp_path: Path, spec: str | None, extra: list[str], message: str
) -> None:
    agent = ds.parent / "agent.py"
    if spec is None:
        args = ["--agent", f"{agent}:good", "--agent", f"{agent}:bad"]
    else:
        (tmp_path / "m.yaml").write_text(spec)
        args = ["--matrix", str(tmp_path / "m.yaml"), "--agent", f"{agent}:good"]
    r = run_cli("run", ds, *args, "--out", tmp_path / "out", *extra)
    assert r.returncode == 2
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_several_models_of_one_endpoint(ds: Path, tmp_path: Path) -> None:
    from fake_server_util import fake_server_process

    with fake_server_process() as url:
        r = run_cli("run", ds, "--endpoint", url, "--model", "m-small", "--model", "m-big",
                    "--out", tmp_path / "m", "--quiet", "--baseline-cell", "m-small",
                    "--limit", "3")  # fmt: skip
    assert r.returncode in (0, 3), r.stdout + r.stderr  # the fake echoes: no drop either way
    for cell in ("m-small", "m-big"):
        h = read_header(tmp_path / "m" / cell)
        assert h.agent is not None and h.agent["model"] == cell
        assert h.settings["matrix"]["cells"] == ["m-small", "m-big"]
    assert "gate m-small → m-big:" in _flat(r.stdout)
