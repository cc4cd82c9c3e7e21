"""The HTML report shows a conversation as a chat, with each turn's tool calls (issue 18)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from agenteval.report import write_html
from agenteval.rundir.trials import trial_line
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "conversation"))
from conv_support import run, write_cases  # noqa: E402


def test_conversation_shown_as_chat_with_calls(tmp_path: Path) -> None:
    cases = write_cases(
        tmp_path / "c.jsonl",
        [
            {"id": "chat", "turns": ["first <b>question</b>", "second"], "initial_state": {
                "sql": ["CREATE TABLE counter (n INTEGER)"], "tables": {"counter": [{"n": 0}]}}},
            {"id": "plain", "input": "just one"},
        ],
    )  # fmt: skip
    out = tmp_path / "run"
    r = run("run", cases, "--agent", "_conv_agents:counter_or_echo", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    target = tmp_path / "report.html"
    write_html(out, target)
    html = target.read_text()
    chats = re.findall(r'<div class="chat">(.*?)</div>\n?<h3>Output', html, re.S)
    assert len(chats) == 1  # the single-turn case has no chat
    chat = chats[0]
    users = re.findall(
        r'<div class="msg user"><div class="who">user · turn (\d)</div><pre>(.*?)</pre>', chat
    )
    assert users == [("1", "first &lt;b&gt;question&lt;/b&gt;"), ("2", "second")]
    # each turn's call sits between its user message and the answer, in order
    order = re.findall(r'class="msg (user|call|agent)[^"]*"', chat)
    assert order == ["user", "call", "agent", "user", "call", "agent"]
    assert chat.count("<strong>increment</strong>") == 2
    assert "n=2" in chat and "<b>" not in chat
    assert "Conversation (2 turns, ended: script_end)" in html


def test_runs_without_conversations_render_as_before(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    header = {"format_version": 2, "kind": "run", "agent": {}, "scorers": []}
    (run_dir / "run.json").write_text(json.dumps(header))
    broken = Trial(case_id="x", output="hi", metadata={"conversation": {"turns": "nope"}})
    (run_dir / "trials.jsonl").write_text(trial_line(broken, {"s": Score(1.0, "ok")}))
    target = tmp_path / "report.html"
    write_html(run_dir, target)
    assert 'class="chat"' not in target.read_text()
    old = ROOT / "tests" / "fixtures" / "runs_v0_1" / "demo_sloppy"  # agenteval 0.1's run
    write_html(old, target)
    assert 'class="chat"' not in target.read_text() and "<h3>Output</h3>" in target.read_text()
