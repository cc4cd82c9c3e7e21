"""``export-otel`` on trials whose times OTLP cannot hold (issue 28, cause 1): a
``started_at`` in year 1, a latency reaching past 2554, a tool call in year 1. Exit 2 with
one line naming the case, repeat and field, and ``--file`` not written (was a
``ValueError: year 0 is out of range`` traceback, exit 1)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from agenteval.cases.case import Case
from agenteval.cli import main
from agenteval.rundir import RunHeader, RunWriter, write_cases
from agenteval.trials.trial import Latency, ToolCall, Trial

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _run(tmp: Path, bad: Trial) -> Path:
    run = tmp / "run"
    with RunWriter.create(run, RunHeader(scorers=[])) as w:
        write_cases(run, [Case(id="a", input="q"), Case(id="b", input="q")])
        w.append(Trial(case_id="a", output="x", started_at=NOW), {})
        w.append(bad, {})
    return run


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (Trial(case_id="b", output="y", started_at=datetime(1, 1, 1, tzinfo=UTC)), "started_at"),
        (
            Trial(case_id="b", output="y", started_at=NOW, latency=Latency(total_s=1e12)),
            "latency.total_s",
        ),
        (
            Trial(
                case_id="b",
                output="y",
                started_at=NOW,
                tool_calls=[
                    ToolCall(name="t", arguments={}, started_at=datetime(1, 1, 1, tzinfo=UTC))
                ],
            ),
            "tool_calls[0].started_at",
        ),
    ],
)
def test_a_time_otlp_cannot_hold_is_one_exit_2_line_and_no_file(
    tmp_path: Path, capsys: Any, bad: Trial, field: str
) -> None:
    run = _run(tmp_path, bad)
    out = tmp_path / "t.jsonl"
    code = main(["export-otel", str(run), "--file", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("agenteval: error: ") and err.count("\n") == 1, err
    assert "case 'b' repeat 0" in err and f"field '{field}'" in err and "out of range" in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no temporary file left


def test_times_within_the_range_export(tmp_path: Path, capsys: Any) -> None:
    run = _run(tmp_path, Trial(case_id="b", output="y", started_at=NOW, latency=Latency(total_s=2)))
    out = tmp_path / "t.jsonl"
    assert main(["export-otel", str(run), "--file", str(out)]) == 0, capsys.readouterr().err
    assert out.read_text().count("\n") == 2
