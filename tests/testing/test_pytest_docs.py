"""docs/pytest.md and docs/python.md run as written: their files are written to a
directory and their commands run there, and the output shown is what was printed. The
"When it fails" section is the issue's must-show: the example failing on a broken agent
with a message per case."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from docrun import run_page, steps

ROOT = Path(__file__).resolve().parents[2]  # the checkout (not conftest's: xdist may load another)


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``agenteval`` command in a subprocess."""
    full = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=120,
    )


# -W: in-process, the plugin module is already imported (by this pytest), which pytest < 9.2
# reports as a warning a user's own run never shows
PLUGIN = (
    "-p",
    "agenteval.testing.pytest_plugin",
    "-p",
    "no:cacheprovider",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)


def test_docs_pytest_md_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the plugin comes from -p
    for name in ("CI", "BUILD_NUMBER"):  # on CI pytest does not cut summary lines to width
        monkeypatch.delenv(name, raising=False)
    pytester.syspathinsert()
    commands: list[str] = []

    def run(command: str) -> str:
        commands.append(command)
        argv = shlex.split(command)
        if argv[0] == "pytest":
            result = pytester.runpytest(*PLUGIN, *argv[1:])
            return result.stdout.str()
        assert argv[0] == "agenteval"
        done = run_cli(*argv[1:], cwd=pytester.path, env={"PYTHONPATH": _pythonpath(pytester)})
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run_page(ROOT / "docs" / "pytest.md", pytester.path, run) == 3
    assert [c.split()[0] for c in commands] == ["agenteval", "pytest", "pytest"]


def test_docs_python_md_runs_as_written(tmp_path: Path) -> None:
    def run(command: str) -> str:
        argv = shlex.split(command)
        assert argv[0] == "python"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(tmp_path)])}
        env["TMPDIR"] = str(tmp_path / "tmp")
        (tmp_path / "tmp").mkdir(exist_ok=True)
        done = subprocess.run(
            [sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert list((tmp_path / "tmp").iterdir()) == []  # the temporary run is gone
        return done.stdout

    assert run_page(ROOT / "docs" / "python.md", tmp_path, run) == 1


def test_the_pages_have_what_the_tests_expect() -> None:
    names = [s.name for s in steps(ROOT / "docs" / "pytest.md") if s.kind == "file"]
    assert names == ["cases.jsonl", "my_agent.py", "test_agent.py", "my_agent.py"]


def _pythonpath(pytester: pytest.Pytester) -> str:
    return os.pathsep.join([str(ROOT / "src"), str(pytester.path)])
