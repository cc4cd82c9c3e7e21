"""Run directories of both fixture generations (``tests/fixtures/runs_v0_1``, written by
0.1, and ``tests/fixtures/runs_71a23f8``, written by the code before the package was
reorganised) report (terminal, JSON, Markdown, JUnit), rescore and gate byte for byte as
the code of commit 71a23f8 did: its outputs are the golden files in
``tests/fixtures/runs_71a23f8/golden``, made by ``_made_with/golden.py`` (see its README).

Issue 26 then changed two outputs on purpose, and only those golden files were made again
with its code (a9b43f3): what ``rescore`` prints (the table shows the scorers that applied)
and the gate's output and exit code (three verdicts, newly failing cases first). Every
report file and every rescored run file is still 71a23f8's, byte for byte.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runs_71a23f8"
GOLDEN = FIXTURES / "golden"
sys.path.insert(0, str(FIXTURES / "_made_with"))
import golden  # noqa: E402  (the script that made the golden files)


def _compare(files: dict[str, bytes], prefix: str) -> None:
    """``files`` under ``prefix`` equal the golden files there, byte for byte."""
    expected = {
        str(p.relative_to(GOLDEN)): p.read_bytes()
        for p in sorted((GOLDEN / prefix).rglob("*"))
        if p.is_file()
    }
    assert expected, f"no golden files under {prefix}"
    got = {n: d for n, d in files.items() if n.startswith(prefix + "/")}
    assert sorted(got) == sorted(expected)
    for name, data in expected.items():
        assert got[name].decode() == data.decode(), name  # a readable diff on failure
        assert got[name] == data, name


@pytest.fixture
def outputs(tmp_path: Path) -> golden.Outputs:
    golden.scratch(tmp_path)
    return golden.Outputs(tmp_path, os.environ.get("PYTHONPATH", ""))


@pytest.mark.parametrize(("gen", "name"), golden.RUNS, ids=[f"{g}-{n}" for g, n in golden.RUNS])
def test_report_and_rescore_as_before(outputs: golden.Outputs, gen: str, name: str) -> None:
    outputs.report_and_rescore(gen, name)
    key = f"{gen}.{name}"
    assert {n.split("/")[0] for n in outputs.files} == {"report", "rescore"}
    _compare(outputs.files, f"report/{key}")
    _compare(outputs.files, f"rescore/{key}")


@pytest.mark.parametrize(("base", "cand"), golden.GATES, ids=[f"{b}..{c}" for b, c in golden.GATES])
def test_gate_as_before(outputs: golden.Outputs, base: str, cand: str) -> None:
    outputs.gate(base, cand)
    _compare(outputs.files, "gate/" + f"{base}..{cand}".replace("/", "."))


def test_the_71a23f8_runs_are_format_2_naming_builtins_builtin() -> None:
    for name in ("demo_careful", "demo_sloppy", "repeats"):
        raw = json.loads((FIXTURES / name / "run.json").read_text())
        assert raw["format_version"] == 2
        refs = {s["name"]: s["ref"] for s in raw["scorers"]}
        assert refs["exact_match"] == "builtin:exact_match"
        assert all(r.startswith("builtin:") for n, r in refs.items() if n != "polite")
    refs = {
        s["name"]: s["ref"]
        for s in json.loads((FIXTURES / "repeats/run.json").read_text())["scorers"]
    }
    assert refs["polite"] == "fixture_scorers:polite"
    trials = [json.loads(t) for t in (FIXTURES / "repeats/trials.jsonl").read_text().splitlines()]
    assert len(trials) == 15 and sum(t["failure"] is not None for t in trials) == 3
    cases = (FIXTURES / "demo_careful/cases.jsonl").read_text()
    assert '"turns"' in cases or '"user"' in cases  # a conversation


def test_rescore_keeps_naming_builtins_builtin() -> None:
    """The golden rescore (which today's must equal) names built-ins ``builtin:<name>``."""
    for gen, name in golden.RUNS:
        raw = json.loads((GOLDEN / f"rescore/{gen}.{name}/run.json").read_text())
        refs = {s["name"]: s["ref"] for s in raw["scorers"]}
        assert refs["pii_leakage"] == "builtin:pii_leakage"
        if (gen, name) == ("71a23f8", "repeats"):
            assert refs["polite"] == "fixture_scorers:polite"
