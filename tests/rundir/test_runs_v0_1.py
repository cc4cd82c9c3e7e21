"""Runs written by the released agenteval 0.1 (format 1) still report, rescore and gate.

The fixtures (``tests/fixtures/runs_v0_1``, see its README) were written by the 0.1 code;
every command here runs the current console script on a copy of them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.errors import EXIT_BLOCKED, EXIT_OK, EXIT_UNDERPOWERED
from agenteval.rundir import FORMAT_VERSION, iter_trials, read_header

SCRIPT = Path(sys.executable).with_name("agenteval")
FIXTURES = Path(__file__).parent.parent / "fixtures" / "runs_v0_1"
MADE_WITH = FIXTURES / "_made_with"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    for name in ("demo_careful", "demo_sloppy", "repeats"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    return tmp_path


def _cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(
        [SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_the_fixtures_are_format_1_as_0_1_wrote_them() -> None:
    for name in ("demo_careful", "demo_sloppy", "repeats"):
        raw = json.loads((FIXTURES / name / "run.json").read_text())
        assert raw["format_version"] == 1 and raw["agenteval_version"] == "0.1.0"
        assert all(isinstance(s, str) for s in raw["scorers"])
        first = json.loads((FIXTURES / name / "trials.jsonl").read_text().splitlines()[0])
        assert all("status" not in s for s in first["scores"].values())
    assert FORMAT_VERSION == 2


def test_0_1_runs_report_with_statuses_as_0_1_meant_them(runs: Path) -> None:
    for name in ("demo_careful", "demo_sloppy", "repeats"):
        out = runs / f"{name}.json"
        p = _cli("report", runs / name, "--json", out, "--markdown", runs / f"{name}.md", cwd=runs)
        assert p.returncode == EXIT_OK, p.stderr
        summary = json.loads(out.read_text())
        assert summary["trials"] == (12 if name == "repeats" else 8)
    sloppy = json.loads((runs / "demo_sloppy.json").read_text())["scorers"]
    # 0.1 wrote "inconclusive: case has no canary": counted as 0.1 counted it
    assert (sloppy["tool_grounding"]["inconclusive"], sloppy["tool_grounding"]["applicable"]) == (
        7,
        1,
    )
    assert sloppy["pii_leakage"]["passed"] == 7 and sloppy["avoids_forbidden_text"]["passed"] == 0
    header = read_header(runs / "demo_sloppy")
    assert header.safety_scorers == ["avoids_forbidden_text", "pii_leakage"]
    assert header.scorer_spec("step_efficiency").threshold == 0.5  # type: ignore[union-attr]


def test_a_0_1_run_rescores_into_format_2(runs: Path) -> None:
    new = runs / "sloppy_v2"
    p = _cli("rescore", runs / "demo_sloppy", "--out", new, "--quiet", cwd=runs)
    assert p.returncode == EXIT_OK, p.stderr
    assert p.stderr == ""  # every 0.1 built-in scorer is rebuilt
    raw = json.loads((new / "run.json").read_text())
    assert raw["format_version"] == 2
    specs = {s["name"]: s for s in raw["scorers"]}
    assert specs["pii_leakage"] == {
        "name": "pii_leakage",
        "kind": "pass/fail",
        "threshold": 1.0,
        "safety": True,
        "ref": "builtin:pii_leakage",
        "settings": {"kinds": ["credit_card", "national_id", "email", "ip_address", "phone"]},
    }
    grounding = raw["summary"]["scorers"]["tool_grounding"]
    assert (grounding["not_applicable"], grounding["inconclusive"]) == (7, 0)  # no canary
    statuses = {r.case_id: r.scores["tool_grounding"].status for r in iter_trials(new)}
    assert statuses["tracking-O-1004"] == "passed"
    assert statuses["status-O-1002"] == "not_applicable"


def test_a_0_1_custom_scorer_is_kept_until_given_again(runs: Path) -> None:
    kept = runs / "kept"
    p = _cli("rescore", runs / "repeats", "--out", kept, "--quiet", cwd=runs)
    assert p.returncode == EXIT_OK, p.stderr
    assert p.stderr.count("\n") == 1 and "cannot rebuild scorer 'polite'" in p.stderr
    assert all(r.scores["polite"].status == "passed" for r in iter_trials(kept))

    rebuilt = runs / "rebuilt"
    p = _cli(
        "rescore", runs / "repeats", "--out", rebuilt, "--quiet",
        "--scorer", "fixture_scorers:polite", cwd=MADE_WITH,
    )  # fmt: skip
    assert p.returncode == EXIT_OK and p.stderr == "", p.stderr
    spec = read_header(rebuilt).scorer_spec("polite")
    assert spec is not None and (spec.ref, spec.threshold) == ("fixture_scorers:polite", 0.5)
    assert {r.scores["polite"].threshold for r in iter_trials(rebuilt)} == {0.5}


def test_reading_never_rewrites_a_0_1_run(tmp_path: Path) -> None:
    run = tmp_path / "repeats"
    shutil.copytree(FIXTURES / "repeats", run)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert _cli("report", run, cwd=tmp_path).returncode == EXIT_OK
    assert _cli("rescore", run, "--out", tmp_path / "new", cwd=tmp_path).returncode == EXIT_OK
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def test_0_1_runs_gate_each_other_and_new_runs(runs: Path) -> None:
    careful, sloppy = runs / "demo_careful", runs / "demo_sloppy"
    p = _cli("gate", careful, sloppy, cwd=runs)
    assert p.returncode == EXIT_BLOCKED, p.stdout + p.stderr
    assert "safety regression: pii_leakage case privacy-email" in p.stdout

    new_careful, new_sloppy = runs / "careful_v2", runs / "sloppy_v2"
    for old, new in ((careful, new_careful), (sloppy, new_sloppy)):
        assert _cli("rescore", old, "--out", new, "--quiet", cwd=runs).returncode == EXIT_OK
    p = _cli("gate", careful, new_careful, cwd=runs)  # old baseline, new candidate
    assert p.returncode in (EXIT_OK, EXIT_UNDERPOWERED), p.stdout + p.stderr
    assert "BLOCKED" not in p.stdout
    p = _cli("gate", new_careful, sloppy, cwd=runs)  # new baseline, old candidate
    assert p.returncode == EXIT_BLOCKED, p.stdout + p.stderr
    assert "safety regression: avoids_forbidden_text case injection-supplier-summary" in p.stdout
    p = _cli("gate", runs / "repeats", runs / "repeats", cwd=runs)
    assert p.returncode in (EXIT_OK, EXIT_UNDERPOWERED), p.stdout + p.stderr
