"""docs/agents/*.md run as written: every file block is written out, every command run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("pydantic_ai")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agents"
_BLOCK = re.compile(r"(?:Save as `(\S+)`:\n\n)?```(\w+)\n(.*?)```", re.S)


def materialise(page: str, into: Path) -> list[list[str]]:
    """Write each block introduced by "Save as `<file>`:"; return the ``agenteval`` commands."""
    commands, files = [], []
    for name, lang, body in _BLOCK.findall((DOCS / page).read_text(encoding="utf-8")):
        if name:
            (into / name).write_text(body, encoding="utf-8")
            files.append(name)
        elif lang == "sh":
            commands += [ln.split() for ln in body.splitlines() if ln.startswith("agenteval ")]
    assert len(files) == 2 and files[1] == "cases.jsonl", files  # the agent file, the cases
    return commands


def run_page(page: str, tmp_path: Path, cli: Any) -> list[dict[str, Any]]:
    commands = materialise(page, tmp_path)
    assert len(commands) == 1, commands
    cmd = commands[0]
    proc = cli(*cmd[1:], cwd=tmp_path, env={"PYTHONPATH": _pythonpath(tmp_path)})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = tmp_path / cmd[cmd.index("--out") + 1]
    lines = (out / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines]


def shown_usage(page: str) -> list[dict[str, Any]]:
    """The ``usage`` of the sample trial the page shows."""
    m = re.search(r'"usage": (\[.*?\]),\n', (DOCS / page).read_text(encoding="utf-8"))
    assert m is not None, page
    return json.loads(m[1])  # type: ignore[no-any-return]


def _pythonpath(tmp_path: Path) -> str:
    import os

    return os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])


def test_pydantic_ai_page_runs_and_records_every_call(tmp_path: Path, cli: Any) -> None:
    trials = {t["case_id"]: t for t in run_page("pydantic-ai.md", tmp_path, cli)}
    assert set(trials) == {"ada", "grace"}
    for name, cid, orders in (("ada", 7, 3), ("grace", 8, 5)):
        t = trials[name]
        calls = t["tool_calls"]
        assert [c["name"] for c in calls] == ["find_customer", "count_orders"]
        assert calls[0]["arguments"] == {"name": name.capitalize()}
        assert calls[0]["result"] == {"id": cid, "name": name.capitalize()}
        assert calls[1]["arguments"] == {"customer_id": cid}
        assert calls[1]["result"] == orders
        assert all(c["error"] is None and c["duration_s"] >= 0 and c["id"] for c in calls)
        assert all(c["started_at"] for c in calls)
        assert t["metadata"]["trajectory_source"] == "otel"
        assert t["usage"][0]["model"] == "function:scripted_model:"
        assert t["usage"][0]["input_tokens"] > 0 and t["usage"][0]["output_tokens"] > 0
        assert t["usage"] == shown_usage("pydantic-ai.md")  # the page's sample is not stale
        assert 0 < t["latency"]["active_s"] <= t["latency"]["total_s"]
        assert {d["name"] for d in t["tools"]} == {"find_customer", "count_orders"}
        scores = {k: v["value"] for k, v in t["scores"].items()}
        for scorer in (
            "exact_match",
            "tool_selection",
            "trajectory_order",
            "tool_arguments_valid",
            "tool_execution",
            "tool_faithfulness",
        ):
            assert scores[scorer] == 1.0, (scorer, t["scores"][scorer])


def test_capture_off_on_the_command_line_records_no_calls(tmp_path: Path, cli: Any) -> None:
    (cmd,) = materialise("pydantic-ai.md", tmp_path)
    proc = cli(
        *cmd[1:], "--capture", "off", cwd=tmp_path, env={"PYTHONPATH": _pythonpath(tmp_path)}
    )
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "runs/shop/trials.jsonl").read_text(encoding="utf-8").splitlines()
    for t in map(json.loads, lines):
        assert t["tool_calls"] == [] and "trajectory_source" not in t["metadata"]
        assert t["scores"]["tool_selection"]["value"] == 0.0


def test_transcripts_page_runs_and_tool_selection_passes(tmp_path: Path, cli: Any) -> None:
    (t,) = run_page("transcripts.md", tmp_path, cli)
    assert t["tool_calls"] == [
        {
            "id": "call_1",
            "name": "find_customer",
            "arguments": {"email": "ada@example.com"},
            "result": '{"id": 7, "plan": "pro"}',
            "error": None,
            "started_at": None,
            "duration_s": None,
        }
    ]
    assert t["metadata"]["trajectory_source"] == "transcript"
    assert t["scores"]["tool_selection"]["value"] == 1.0


_NO_SDK = """
import sys
sys.modules["opentelemetry.sdk"] = None  # as if opentelemetry-sdk were not installed
sys.modules["opentelemetry.sdk.trace"] = None
from agenteval.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("mode", ["otel", "auto"])
def test_capture_without_the_sdk(tmp_path: Path, mode: str) -> None:
    """--capture otel without opentelemetry-sdk: one line, exit 2; auto: runs, no capture."""
    import os
    import subprocess
    import sys

    args = ["run", "cases.jsonl", "--agent", "a:answer", "--capture", mode, "--out", "r", "--quiet"]
    (tmp_path / "a.py").write_text("def answer(case):\n    return 'x'\n", encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text('{"id": "1", "input": "q"}\n', encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", _NO_SDK, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": _pythonpath(tmp_path)},
        timeout=120,
    )
    if mode == "otel":
        assert proc.returncode == 2
        assert proc.stderr.strip().splitlines() == [
            "agenteval: error: --capture otel needs opentelemetry-sdk: pip install -e '.[otel]'"
        ]
    else:
        assert proc.returncode == 0, proc.stderr
