"""``--agent path/to/file.py:fn`` works like ``--tools file.py``: the file is imported from
its path (its directory importable); a missing file or function is one clear line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_support import no_traceback, read_trials, run_cli, write_jsonl

from agenteval.errors import EXIT_INPUT

pytestmark = pytest.mark.reliability


@pytest.fixture
def project(tmp_path: Path) -> Path:
    code = tmp_path / "agents" / "v2"
    code.mkdir(parents=True)
    (code / "helpers.py").write_text("def shout(s):\n    return s.upper()\n", encoding="utf-8")
    (code / "my agent.py").write_text(
        "from helpers import shout\n\n\ndef answer(case):\n    return shout(case.input)\n",
        encoding="utf-8",
    )
    (code / "checks.py").write_text(
        "def loud(case, trial):\n    return trial.output.isupper()\n", encoding="utf-8"
    )
    write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "input": "hi"}, {"id": "b", "input": "yo"}])
    return tmp_path


def test_agent_and_scorer_from_file_paths(project: Path) -> None:
    p = run_cli(
        "run",
        "cases.jsonl",
        "--agent",
        "agents/v2/my agent.py:answer",
        "--scorer",
        str(project / "agents" / "v2" / "checks.py") + ":loud",
        "--out",
        "r",
        "--quiet",
        cwd=project,
    )
    assert p.returncode == 0, p.stderr
    trials = read_trials(project / "r")
    assert sorted(t["output"] for t in trials) == ["HI", "YO"]
    assert all(t["scores"]["loud"]["value"] == 1.0 for t in trials)


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("agents/v2/missing.py:answer", ["agents/v2/missing.py", "not found"]),
        ("agents/v2/my agent.py:nope", ["my agent.py", "no attribute 'nope'"]),
    ],
)
def test_missing_file_or_function_is_one_line(project: Path, target: str, words: list[str]) -> None:
    p = run_cli("run", "cases.jsonl", "--agent", target, "--out", "r", cwd=project)
    assert p.returncode == EXIT_INPUT
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agenteval: error:"), p.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert no_traceback([p.stdout, p.stderr])
    assert not (project / "r" / "trials.jsonl").exists()
