"""``agenteval rescore`` of a run from someone else, without ``--trust-run``: no code the
run names may be imported (docs/cli.md: "importing a module that run.json names runs code
and a run may come from someone else"). A real ``agenteval rescore`` process, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agenteval.cases.case import Case
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.trials.trial import Trial


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
    trusted = subprocess.run(
        [*argv, "--out", str(tmp_path / "trusted"), "--quiet", "--trust-run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert trusted.returncode == 0, trusted.stderr[-1500:]
    assert marker.exists(), "with --trust-run the matcher's code is imported, as documented"


def test_a_matcher_that_was_not_imported_gives_no_verdict() -> None:
    """Scoring a case read back untrusted with a call that reaches its matcher: the
    tool_call_match score is an error naming the matcher and --trust-run, never a pass or
    a fail decided without the matcher's code."""
    from agenteval.cases.case import case_from_run
    from agenteval.scorers import builtin_scorer
    from agenteval.scoring.apply import Scorers
    from agenteval.trials.trial import ToolCall

    case = case_from_run(
        {
            "id": "c1",
            "input": "hi",
            "expected_calls": [{"name": "t", "arguments": {"a": {"$python": "nowhere:fn"}}}],
        }
    )
    trial = Trial(case_id="c1", output="ok", tool_calls=[ToolCall(name="t", arguments={"a": 1})])
    score = Scorers([builtin_scorer("tool_call_match")]).apply(case, trial)["tool_call_match"]
    assert score.status == "error", score
    assert "nowhere:fn was not imported" in score.reason and "--trust-run" in score.reason
