"""``agenteval mcp`` against a hostile runs folder: a run's files must never make the server
run code. A real server process (no --allow-run), real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _mcp_runs import mcp_server, write_run

from agenteval.cases.case import Case
from agenteval.trials.trial import Trial

pytest.importorskip("mcp")

EVIL = """import pathlib
pathlib.Path({marker!r}).write_text("imported")


def fn(value):
    return True
"""


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """A runs folder with one run whose cases snapshot names a ``$python`` matcher in a
    file outside the folder; the file it would import writes ``marker``."""
    marker = tmp_path / "IMPORTED"
    evil = tmp_path / "outside" / "evil.py"
    evil.parent.mkdir()
    evil.write_text(EVIL.format(marker=str(marker)))
    root = tmp_path / "runs"
    run = write_run(
        root / "r1", [Case(id="c1", input="hi")], [(Trial(case_id="c1", output="hi"), {})]
    )
    matcher = {"$python": f"{evil}:fn"}
    case = {
        "id": "c1",
        "input": "hi",
        "expected": "hi",
        "expected_calls": [{"name": "t", "arguments": {"a": matcher}}],
    }
    (run / "cases.jsonl").write_text(json.dumps(case) + "\n")
    return root, marker


def test_reading_a_run_never_imports_a_matcher_its_cases_name(tmp_path: Path) -> None:
    root, marker = _planted(tmp_path)
    with mcp_server(root) as client:
        trial = client.data("get_trial", {"run": "r1", "case_id": "c1"})
        client.data("run_summary", {"run": "r1"})
        client.data("list_runs")
        client.call("failing_trials", {"run": "r1", "scorer": "exact_match"})
    assert trial["input"] == "hi" and trial["expected"] == "hi" and trial["output"] == "hi"
    assert not marker.exists(), "the server imported a file named by a run's cases.jsonl"


def test_the_viewer_reading_a_case_never_imports_a_matcher_its_cases_name(
    tmp_path: Path,
) -> None:
    root, marker = _planted(tmp_path)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agenteval.view.catalog import Catalog\n"
        "state = Catalog(Path(sys.argv[1])).get('r1')\n"
        "assert state is not None\n"
        "case = state.case('c1')\n"
        "assert case is not None and case.input == 'hi', case\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-1500:]
    assert not marker.exists(), "the viewer imported a file named by a run's cases.jsonl"
