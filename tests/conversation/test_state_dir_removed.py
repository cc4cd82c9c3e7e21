"""docs/conversations.md, "Per-trial state": each trial's database lives in a temporary
directory of its own (under ``TMPDIR``), which is deleted when the trial ends, whether
it answered or failed; the trial keeps the snapshot."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conv_support import by_case, env, run, write_cases

AGENT = """
from agenteval.conversation.state import current_database


def answer(case):
    said = case.input[-1]["content"] if isinstance(case.input, list) else case.input
    if "boom" in said:
        raise RuntimeError(f"at {current_database()}")
    return str(current_database())
"""

STATE = {"tables": {"t": [{"n": 1}]}}


def test_every_trials_database_directory_is_deleted(tmp_path: Path) -> None:
    (tmp_path / "dbagent.py").write_text(AGENT)
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    cases = write_cases(
        tmp_path / "c.jsonl",
        [
            {"id": "single", "input": "hi", "initial_state": STATE},
            {"id": "talk", "turns": ["hi", "again"], "initial_state": STATE},
            {"id": "fails", "turns": ["hi", "boom"], "initial_state": STATE},
        ],
    )
    out = tmp_path / "run"
    path = os.pathsep.join([str(tmp_path), env()["PYTHONPATH"]])
    extra = {"TMPDIR": str(tmpdir), "PYTHONPATH": path}
    r = run("run", cases, "--agent", "dbagent:answer", "--repeats", "2", "--out", out, extra=extra)
    assert r.returncode == 0, r.stderr
    lines = by_case(out)
    used = [Path(lines[(c, k)]["output"]) for c in ("single", "talk") for k in (0, 1)]
    used += [Path(lines[("fails", k)]["failure"]["message"].split("at ", 1)[1]) for k in (0, 1)]
    assert len(set(used)) == 6  # a database of its own per trial
    assert all(p.is_relative_to(tmpdir) for p in used), used
    assert not any(p.exists() or p.parent.exists() for p in used)
    assert list(tmpdir.iterdir()) == []
    snap = lines[("fails", 1)]["metadata"]["state"]["tables"]["t"]
    assert snap == {"columns": ["n"], "rows": [[1]]}, json.dumps(snap)
