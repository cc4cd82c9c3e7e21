"""docs/agents/proxy.md runs as written: its agent file, its cases and its one command
(the fake server's port in the command replaced by the one the test started)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from doc_samples import shown_usage
from fake_server_util import fake_server_process

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents" / "proxy.md"
_BLOCK = re.compile(r"(?:Save as `(\S+)`:\n\n)?```(\w+)\n(.*?)```", re.S)


def test_proxy_page_runs_and_records_every_call(tmp_path: Path, cli: Any) -> None:
    commands, files = [], []
    for name, lang, body in _BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        if name:
            (tmp_path / name).write_text(body, encoding="utf-8")
            files.append(name)
        elif lang == "sh":
            commands += [ln for ln in body.splitlines() if ln.startswith("agenteval run ")]
    assert files == ["shop_agent.py", "cases.jsonl"] and len(commands) == 1
    with fake_server_process() as upstream:
        cmd = commands[0].replace("http://127.0.0.1:8000/v1", upstream).split()
        env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
        env["OPENAI_API_KEY"] = "sk-docs-page-key-0123456789"
        proc = cli(*cmd[1:], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = tmp_path / cmd[cmd.index("--out") + 1]
    trials = {}
    for line in (out / "trials.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        trials[t["case_id"]] = t
    ada = trials["ada"]
    assert ada["output"] == "echo: 30"
    assert [
        (c["id"], c["name"], c["arguments"], c["result"], c["error"]) for c in ada["tool_calls"]
    ] == [
        ("call_1", "find_customer", {"name": "Ada"}, '{"id": 3, "name": "Ada"}', None),
        ("call_2", "count_orders", {"customer_id": 3}, "30", None),
    ]
    assert ada["metadata"]["trajectory_source"] == "proxy"
    assert [m["tool_calls"] for m in ada["metadata"]["model_calls"]] == [
        ["find_customer"],
        ["count_orders"],
        [],
    ]
    assert ada["usage"][0]["model"] == "gpt-4.1-mini" and ada["usage"][0]["output_tokens"] == 2
    assert ada["usage"] == shown_usage(PAGE, "ada")  # the page shows what is recorded
    assert 0 < ada["latency"]["active_s"] < ada["latency"]["total_s"]
    assert {d["name"] for d in ada["tools"]} == {"find_customer", "count_orders"}
    scores = {k: v["value"] for k, v in ada["scores"].items()}
    for scorer in ("tool_selection", "trajectory_order", "tool_arguments_valid",
                   "tool_execution", "tool_faithfulness"):  # fmt: skip
        assert scores[scorer] == 1.0, (scorer, ada["scores"][scorer])
    (call,) = trials["nobody"]["tool_calls"]
    assert (call["result"], call["error"]) == (
        None,
        "Error: LookupError: no customer named Nobody",
    )
    assert trials["nobody"]["scores"]["tool_execution"]["value"] == 0.0
    for p in out.rglob("*"):
        assert not p.is_file() or "sk-docs-page-key" not in p.read_text(errors="replace")
