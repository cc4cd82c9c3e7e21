"""An ``--agent``/``--scorer`` module that calls ``sys.exit`` or raises at import is a bad
target: one line naming it, exit 2, no run written (it used to exit 0 with no run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_support import no_traceback, run_cli, write_jsonl

from agenteval.errors import EXIT_INPUT

pytestmark = pytest.mark.reliability

BODIES = {
    "exit0": "import sys\nsys.exit(0)\n",
    "exit3": "raise SystemExit(3)\n",
    "valueerror": "raise ValueError('bad config')\n",
    "baseexc": "class Odd(BaseException):\n    pass\n\nraise Odd('odd')\n",
}


@pytest.mark.parametrize(
    ("option", "style", "body"),
    [("--agent", style, body) for style in ("file", "module") for body in sorted(BODIES)]
    + [("--scorer", "file", "exit0"), ("--scorer", "module", "baseexc")],
)
def test_module_exiting_at_import_is_one_line_exit_2(
    tmp_path: Path, body: str, style: str, option: str
) -> None:
    (tmp_path / f"quits_{body}.py").write_text(
        BODIES[body] + "\n\ndef fn(*a):\n    return 'x'\n", encoding="utf-8"
    )
    (tmp_path / "ok_agent.py").write_text("def fn(case):\n    return 'x'\n", encoding="utf-8")
    write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "input": "hi"}])
    target = f"quits_{body}.py:fn" if style == "file" else f"quits_{body}:fn"
    extra = [] if option == "--agent" else ["--agent", "ok_agent.py:fn"]
    p = run_cli("run", "cases.jsonl", *extra, option, target, "--out", "r", cwd=tmp_path)
    assert p.returncode == EXIT_INPUT, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert target in lines[0]
    assert no_traceback([p.stdout, p.stderr])
    assert not (tmp_path / "r" / "trials.jsonl").exists()


@pytest.mark.parametrize("style", ["file", "module"])
def test_tools_module_exiting_at_import_is_one_line_exit_2(tmp_path: Path, style: str) -> None:
    (tmp_path / "quits.py").write_text(BODIES["exit0"], encoding="utf-8")
    write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "input": "hi"}])
    target = "quits.py" if style == "file" else "quits"
    p = run_cli(
        "run", "cases.jsonl", "--agent", "tool-loop", "--endpoint", "http://127.0.0.1:9/v1",
        "--model", "m", "--tools", target, "--out", "r", cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == EXIT_INPUT, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and target in lines[0] and "sys.exit(0)" in lines[0], p.stderr
    assert no_traceback([p.stdout, p.stderr])
    assert not (tmp_path / "r" / "trials.jsonl").exists()
