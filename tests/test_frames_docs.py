"""docs/view.md's data-frame example, run on a run whose truth is known: one wrong answer,
one agent error, tool calls. Its ``wrong`` and ``causes`` are not empty (the example used
to group failed exact_match rows by failure cause, which is always empty)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from agenteval import Case, evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]  # the checkout (not conftest's: xdist may load another)


def agent(case: Case) -> dict[str, object]:
    if case.id == "down":
        raise TimeoutError("upstream")
    calls = [{"name": "lookup", "arguments": {"q": case.input}, "result": "ok", "duration_s": 0.01}]
    return {"output": "4" if case.id == "right" else "5", "tool_calls": calls}


def test_the_frames_example_in_docs_view_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [
        {"id": "right", "input": "2+2?", "expected": "4"},
        {"id": "wrong", "input": "2+2?", "expected": "4"},
        {"id": "down", "input": "2+2?", "expected": "4"},
    ]
    evaluate(cases, agent, out=tmp_path / "runs" / "gpt-4o")
    page = (ROOT / "docs" / "view.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "trials_df(" in b]
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {}
    exec(compile(block, "docs/view.md", "exec"), ns)
    assert list(ns["wrong"]["case_id"]) == ["wrong"]  # type: ignore[index]
    assert list(ns["wrong"]["output"]) == ["5"]  # type: ignore[index]
    assert dict(ns["causes"]) == {"agent_error": 1}  # type: ignore[call-overload]
    assert ns["means"]["exact_match"] == 0.5  # type: ignore[index]
    assert ns["calls"].loc["lookup", "count"] == 2  # type: ignore[attr-defined]
    assert list(ns["runs"]["run"]) == ["gpt-4o"]  # type: ignore[index]
