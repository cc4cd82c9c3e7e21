"""``import-traces``: an unusable file among good ones stops the command before the run
directory exists; ``--out`` is never an input; the SQLite spool in ``TMPDIR`` is removed
when the command ends, whether it succeeded or not (docs/traces.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.proto")

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
PYD = FIX / "pydantic_ai.jsonl"


def _import(cli: Any, tmp: Path, *args: Any) -> Any:
    spool = tmp / "tmpdir"
    spool.mkdir(exist_ok=True)
    r = cli("import-traces", *args, env={"TMPDIR": str(spool)})
    assert list(spool.iterdir()) == [], "the spool was left behind"
    return r


def test_a_bad_file_after_good_ones_writes_nothing_and_leaves_no_spool(
    tmp_path: Path, cli: Any
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(PYD.read_bytes() + b'{"resourceSpans": 3}\n')
    out = tmp_path / "out"
    r = _import(cli, tmp_path, PYD, bad, "--out", out)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("agenteval: error: ") and r.stderr.count("\n") == 1
    assert r.stderr.endswith("bad.jsonl:13: field 'resourceSpans': must be a list\n")
    assert not out.exists()


def test_a_successful_import_removes_its_spool(tmp_path: Path, cli: Any) -> None:
    r = _import(cli, tmp_path, PYD, "--out", tmp_path / "out", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "trials.jsonl").stat().st_size > 0


@pytest.mark.parametrize("which", ["trace file", "dataset"])
def test_out_that_is_an_input_is_refused_and_the_input_kept(
    tmp_path: Path, cli: Any, which: str
) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_bytes(PYD.read_bytes())
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text('{"id": "a", "input": "hi"}\n')
    target = traces if which == "trace file" else dataset
    before = target.read_bytes()
    r = _import(cli, tmp_path, traces, "--out", target, "--dataset", dataset, "--join-attr", "x")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and f"is the {which} " in r.stderr, r.stderr
    assert target.read_bytes() == before
