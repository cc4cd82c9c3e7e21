"""``agenteval rescore`` of a run from someone else, without ``--trust-run``: no code the
run names may be imported (docs/cli.md: "importing a module that run.json names runs code
and a run may come from someone else"). A real ``agenteval rescore`` process, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.cases.case import Case
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.trials.trial import Trial


@pytest.mark.xfail(
    strict=True,
    reason="rescore validates the cases snapshot, and validating expected_calls imports the"
    " $python matchers it names, --trust-run or not; the fix spans cases/ (a validation"
    " that does not import), the tool_call_match scorer (keep the stored score) and"
    " cli/rescore: reported, not fixed here",
)
def test_rescore_without_trust_run_imports_no_matcher_the_cases_name(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    evil = tmp_path / "evil.py"
    evil.write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
        "def fn(value):\n    return True\n"
    )
    run = tmp_path / "theirs"
    header = RunHeader(dataset=DatasetRef(path="cases.jsonl", sha256="s", cases=1))
    with RunWriter.create(run, header) as w:
        write_cases(run, [Case(id="c1", input="hi")])
        w.append(Trial(case_id="c1", output="hi"), {})
    case = {
        "id": "c1",
        "input": "hi",
        "expected_calls": [{"name": "t", "arguments": {"a": {"$python": f"{evil}:fn"}}}],
    }
    (run / "cases.jsonl").write_text(json.dumps(case) + "\n")
    argv = [sys.executable, "-m", "agenteval", "rescore", str(run)]
    out = subprocess.run(
        [*argv, "--out", str(tmp_path / "new"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in out.stderr, out.stderr[-1500:]
    assert not marker.exists(), "rescore without --trust-run imported a file the run names"
