"""A trial's metadata comes from the agent or a trace: usage in it that is not token
usage is left out of the summary, never a traceback (score, report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def test_malformed_simulated_user_usage_is_left_out(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "c1", "input": "hi"}\n{"id": "c2", "input": "yo"}\n'
    )
    user = {
        "usage": [
            {"input_tokens": "lots"},
            7,
            {"model": "m", "input_tokens": 3, "output_tokens": 2},
        ]
    }
    rows = [
        {"case_id": "c1", "output": "x", "metadata": {"conversation": {"turns": [], "user": user}}},
        {"case_id": "c2", "output": "y", "metadata": {"conversation": {"user": {"usage": "?"}}}},
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = cli("score", "cases.jsonl", "t.jsonl", "--out", "o", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    rep = cli("report", "o", "--json", "s.json", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    cost = json.loads((tmp_path / "s.json").read_text())["cost"]
    assert cost["user_tokens"] == {"input": 3, "output": 2}  # only the valid entry counts


def test_rescore_on_workers_folds_the_same_valid_usage(tmp_path: Path, cli: Any) -> None:
    """The workers' summary contribution reads the user's usage as the one-process
    summary does: malformed entries are left out there too, never a worker crash."""
    test_malformed_simulated_user_usage_is_left_out(tmp_path, cli)
    for name, more in (("one", ()), ("two", ("--processes", "2"))):
        r = cli("rescore", "o", "--out", name, "--quiet", *more, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    heads = [json.loads((tmp_path / n / "run.json").read_text()) for n in ("one", "two")]
    assert heads[0]["summary"]["cost"] == heads[1]["summary"]["cost"]
    assert heads[1]["summary"]["cost"]["user_tokens"] == {"input": 3, "output": 2}
