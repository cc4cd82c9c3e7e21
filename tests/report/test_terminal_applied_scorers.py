"""Terminal tables show the scorers that applied and one line naming the others;
``agenteval report --all-scorers`` shows every row (issue 26)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.rundir import RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score, not_applicable
from agenteval.trials.trial import Trial


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    header = RunHeader(scorers=["exact_match", "state_match", "pii_leakage"])
    with RunWriter.create(run, header) as w:
        write_cases(run, [Case(id="a", input="q", expected="x")])
        w.append(
            Trial(case_id="a", output="x"),
            {
                "exact_match": Score(1.0, "ok"),
                "state_match": not_applicable("case has no expected_state"),
                "pii_leakage": Score(1.0, "none"),
            },
        )
    return run


def test_rows_for_the_scorers_that_applied_and_a_line_for_the_others(
    tmp_path: Path, cli: Any
) -> None:
    run = _run(tmp_path)
    r = cli("report", run)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert any("exact_match" in x for x in rows) and any("pii_leakage" in x for x in rows)
    assert not any("state_match" in x for x in rows)
    assert "not applicable to any trial (1): state_match" in r.stdout
    r = cli("report", run, "--all-scorers")
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert any("state_match" in x for x in rows)
    assert "not applicable to any trial" not in r.stdout
