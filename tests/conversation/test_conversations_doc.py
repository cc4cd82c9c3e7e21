"""docs/conversations.md: the worked example runs as shown, with the output shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conv_support import env

from agenteval.cases.case import Case
from agenteval.scorers import procedure
from agenteval.trials.trial import Trial

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "conversations.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "docs" / "examples" / "conversation"


def _all_blocks() -> list[tuple[str, str]]:
    """Every fenced block of the page: (language, text)."""
    out, lang, body = [], None, []
    for line in DOC.splitlines():
        if line.lstrip().startswith("```"):
            if lang is None:
                lang, body = line.strip()[3:], []
            else:
                out.append((lang, "\n".join(body) + "\n"))
                lang = None
        elif lang is not None:
            body.append(line)
    return out


def _blocks(lang: str) -> list[str]:
    return [text for kind, text in _all_blocks() if kind == lang]


def test_the_files_shown_are_the_files_run() -> None:
    yaml_block, agent_block, user_block = _blocks("yaml")[0], *_blocks("python")[:2]
    assert yaml_block in (EXAMPLE / "cases.yaml").read_text()
    assert agent_block in (EXAMPLE / "agent.py").read_text()
    assert user_block in (EXAMPLE / "customer.py").read_text()


def test_the_worked_example_gives_the_output_shown(tmp_path: Path) -> None:
    out = tmp_path / "tickets"
    r = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "cases.yaml", "--agent", "agent:answer",
         "--user", "customer:reply", "--out", str(out)],
        cwd=EXAMPLE, env=env({"COLUMNS": "100", "CI": "1"}), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    shown = next(b for b in _blocks("") if "│ state_match" in b)
    for line in shown.strip().splitlines():
        assert line in r.stdout, line
    lines = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    t = next(x for x in lines if x["case_id"] == "close-ticket")
    assert t["output"] == "T-2 closed."
    assert [(m["role"], m["content"]) for m in t["messages"]] == [
        ("user", "Please close my ticket T-2."),
        ("assistant", "Shall I close T-2? Reply yes to confirm."),
        ("user", "yes, please"),
        ("assistant", "T-2 closed."),
    ]
    conv = t["metadata"]["conversation"]
    assert conv["ended"] == "user_stop" and conv["id"].startswith("close-ticket/0/")
    assert [(x["user"], x["output"], x["calls"]) for x in conv["turns"]] == [
        ("Please close my ticket T-2.", "Shall I close T-2? Reply yes to confirm.", [0, 0]),
        ("yes, please", "T-2 closed.", [0, 1]),
    ]
    assert conv["user"] == {
        "kind": "python", "usage": [], "retries": [], "stop_message": "Thanks! ###STOP###"
    }  # fmt: skip
    tickets = {"columns": ["id", "status"], "rows": [["T-1", "open"], ["T-2", "closed"]]}
    assert t["metadata"]["state"] == {"tables": {"tickets": tickets}}
    assert t["scores"]["state_match"]["reason"] == "final state matches (1 check)"
    assert t["scores"]["procedure"]["reason"] == "every call follows the 1 procedure rule(s)"
    # the hasty agent of the text: the same call, made in the first turn
    case = Case.model_validate(
        next(c for c in __import__("yaml").safe_load((EXAMPLE / "cases.yaml").read_text())
             if c["id"] == "close-ticket")
    )  # fmt: skip
    hasty = Trial.model_validate(
        {
            **t,
            "metadata": {
                "conversation": {
                    "turns": [
                        {
                            "user": "Please close my ticket T-2.",
                            "output": "T-2 closed.",
                            "calls": [0, 1],
                        }
                    ]
                }
            },
        }
    )
    reason = procedure(case, hasty).reason
    assert (
        'call #1 close_ticket in turn 1 after user message "Please close my ticket T-2.",' in reason
    )
    assert "which does not match '^yes'" in DOC and "which does not match '^yes'" in reason


def _shown_trial(marker: str) -> dict[str, Any]:
    """The abridged trial block containing ``marker``, as JSON (``...`` elisions dropped)."""
    block = next(b for b in _blocks("json") if marker in b)
    return json.loads(block.replace(", ...}", "}"))


def test_the_failed_conversation_shown_is_what_a_run_records(tmp_path: Path) -> None:
    out = tmp_path / "crash"
    r = subprocess.run(
        [sys.executable, "-m", "agenteval", "run", "cases.yaml", "--agent", "agent:crashes",
         "--user", "customer:reply", "--out", str(out)],
        cwd=EXAMPLE, env=env({"CI": "1"}), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr  # one trial of two answered
    lines = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    got = next(x for x in lines if x["case_id"] == "close-ticket")
    shown = _shown_trial('"ended": "failed"')
    for key in ("output", "tool_calls", "failure", "messages"):
        assert got[key] == shown[key], key
    conv, shown_conv = got["metadata"]["conversation"], shown["metadata"]["conversation"]
    assert conv["id"].startswith("close-ticket/0/") and conv["ended"] == shown_conv["ended"]
    assert conv["user"] == shown_conv["user"]
    drop = {"latency_s"}  # timings differ from run to run
    assert [{k: v for k, v in t.items() if k not in drop} for t in conv["turns"]] == [
        {k: v for k, v in t.items() if k not in drop} for t in shown_conv["turns"]
    ]
    assert got["metadata"]["state"] == shown["metadata"]["state"]
    for name, score in shown["scores"].items():
        assert {k: got["scores"][name][k] for k in score} == score, name


def test_the_library_example_prints_what_is_shown(tmp_path: Path) -> None:
    code = next(b for b in _blocks("python") if 'user="customer:reply"' in b)
    code = code.replace(
        'user="customer:reply")', f'user="customer:reply", out={str(tmp_path / "r")!r})'
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=EXAMPLE, env=env(), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    shown = next(b for b in _blocks("") if b.startswith("1.0 {"))
    assert r.stdout == shown
