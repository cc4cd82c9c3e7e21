"""Small command-line fixes of issue 29: typo'd options, a judge endpoint without a rubric."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


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


def test_a_typod_option_gets_the_subcommands_usage_and_a_suggestion(tmp_path: Path) -> None:
    r = run_cli("run", tmp_path / "cases.jsonl", "--agent", "x.py:f", "--concurency", "4")
    assert r.returncode == 2
    assert r.stderr.startswith("usage: agenteval run ")
    last = r.stderr.strip().splitlines()[-1]
    assert last == (
        "agenteval: error: unrecognized arguments: --concurency 4; did you mean --concurrency?"
    )
    r = run_cli("gate", "a", "b", "--alow-underpowered")
    assert r.returncode == 2 and r.stderr.startswith("usage: agenteval gate ")
    assert r.stderr.strip().endswith("did you mean --allow-underpowered?")
    r = run_cli("report", "a", "--zzzzzz")  # nothing close: no guess
    assert r.returncode == 2 and r.stderr.strip().endswith("unrecognized arguments: --zzzzzz")
    assert "Traceback" not in r.stderr


def test_a_judge_endpoint_without_a_rubric_is_refused(tmp_path: Path) -> None:
    ds = tmp_path / "cases.jsonl"
    ds.write_text('{"id": "a", "input": "q"}\n')
    (tmp_path / "agent.py").write_text("def f(case):\n    return 'x'\n")
    r = run_cli("run", ds, "--agent", f"{tmp_path / 'agent.py'}:f", "--out", tmp_path / "r",
                "--judge-endpoint", "http://127.0.0.1:9/v1", "--judge-model", "j")  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "agenteval: error: --judge-endpoint without --rubric: no judge would run; add --rubric"
        " NAME (correctness, groundedness, ... or a template file)"
    )
    assert not (tmp_path / "r").exists()
