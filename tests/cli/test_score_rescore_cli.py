"""The real console script on real files: score a trial file, rescore the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agenteval.rundir import iter_trials, read_header

SCRIPT = Path(sys.executable).with_name("agenteval")

CASES = [
    {
        "id": "q1",
        "input": "Total of order 7?",
        "expected": "19,753",
        "expected_tools": ["get_order"],
        "max_tool_calls": 1,
        "tags": ["orders"],
    },
    {"id": "q2", "input": "Who is customer 3?", "expected": "Ada", "canary": "CUST-XYZZY"},
]
TRIALS = [
    {
        "case_id": "q1",
        "output": "19753.0",
        "tool_calls": [
            {"name": "get_order", "arguments": '{"id": 7}', "result": {"total": 19753}},
            {"name": "get_order", "arguments": {"id": 7}, "result": {"total": 19753}},
        ],
    },
    {"case_id": "q2", "output": "Ada"},
]

SCORER = """
def has_total(case, trial):
    if trial.output is None:
        return None
    return (any(c.isdigit() for c in trial.output), "looked for a digit")
"""


def _write(tmp: Path) -> tuple[Path, Path]:
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    trials = tmp / "trials.jsonl"
    trials.write_text("".join(json.dumps(t) + "\n" for t in TRIALS))
    (tmp / "myscorers.py").write_text(SCORER)
    return cases, trials


def test_score_then_rescore_with_the_console_script(tmp_path: Path) -> None:
    cases, trials = _write(tmp_path)
    out = tmp_path / "run"
    p = subprocess.run(
        [SCRIPT, "score", cases, trials, "--out", out, "--scorer", "myscorers:has_total"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "exact_match" in p.stdout and "has_total" in p.stdout
    header = read_header(out)
    assert header.kind == "score" and header.dataset.cases == 2
    assert header.summary is not None and header.summary["trials"] == 2
    recs = {r.case_id: r for r in iter_trials(out)}
    q1, q2 = recs["q1"].scores, recs["q2"].scores
    assert q1["exact_match"].value == 1.0
    assert q1["tool_selection"].value == 1.0
    assert q1["redundant_calls"].value == 0.0
    assert q1["step_efficiency"].value == 0.5
    assert q1["has_total"].value == 1.0 and q1["has_total"].reason == "looked for a digit"
    assert q2["tool_selection"].value is None
    assert q2["tool_grounding"].value == 0.0

    before = (out / "trials.jsonl").read_bytes()
    new = tmp_path / "rescored"
    p = subprocess.run(
        [SCRIPT, "rescore", out, "--out", new, "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert (out / "trials.jsonl").read_bytes() == before  # the source run is untouched
    again = {r.case_id: r for r in iter_trials(new)}
    assert again["q1"].scores["step_efficiency"] == q1["step_efficiency"]
    assert again["q1"].scores["has_total"] == q1["has_total"]  # carried over
    assert read_header(new).source_run == str(out)


def test_trial_for_an_unknown_case_is_an_input_error(tmp_path: Path) -> None:
    cases, trials = _write(tmp_path)
    trials.write_text(json.dumps({"case_id": "nope"}) + "\n")
    out = tmp_path / "run"
    p = subprocess.run(
        [SCRIPT, "score", cases, trials, "--out", out], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2
    assert "nope" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not out.exists()
