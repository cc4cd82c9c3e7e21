"""Case selection on the real command: run, resume, rescore, judge and the gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.rundir import iter_trials, read_header
from fake_server_util import fake_server_process


def run_cli(
    *args: str | os.PathLike[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``agenteval`` command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        timeout=300,
    )


CASES = [
    {"id": "a1", "input": "2+2", "expected": "4", "tags": ["math"], "tier": "gold"},
    {"id": "a2", "input": "3+3", "expected": "6", "tags": ["math", "easy"], "difficulty": 3},
    {"id": "b1", "input": "capital of France", "expected": "Paris", "tags": ["geo"]},
    {"id": "b2", "input": "capital of Spain", "expected": "Madrid", "tags": ["geo"]}
    | {"tier": "gold"},
    {"id": "c1", "input": "hi", "expected": "hi"},
]
AGENT = """
ANSWERS = {"2+2": "4", "3+3": "6", "capital of France": "Paris", "capital of Spain": "Madrid",
           "hi": "hi"}

def good(case):
    return ANSWERS[case.input_text()]

def bad(case):  # right on a1 only
    return "4" if case.input_text() == "2+2" else "no idea"
"""


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    p = tmp_path / "cases.jsonl"
    p.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "agent.py").write_text(AGENT)
    return p


def _run(ds: Path, out: Path, *extra: str, fn: str = "good") -> tuple[int, str]:
    r = run_cli("run", ds, "--agent", f"{ds.parent / 'agent.py'}:{fn}", "--out", out, "--quiet",
                *extra)  # fmt: skip
    return r.returncode, r.stderr


def _ids(run: Path) -> list[str]:
    return [t.case_id for t in iter_trials(run)]


def test_filters_intersect_are_recorded_and_resume_refuses_another_selection(
    ds: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    rc, err = _run(ds, out, "--tag", "math", "--tag", "geo", "--where", "metadata.tier=gold")
    assert rc == 0, err
    assert sorted(_ids(out)) == ["a1", "b2"]
    assert [json.loads(x)["id"] for x in (out / "cases.jsonl").read_text().splitlines()] == [
        "a1",
        "b2",
    ]
    sel = read_header(out).settings["selection"]
    assert sel == {
        "tags": ["math", "geo"],
        "where": ["metadata.tier=gold"],
        "selected": 2,
        "of": 5,
    }
    assert "agenteval: selection: tag math or geo, where metadata.tier=gold, 2 of 5 cases" in err

    rc, err = _run(ds, out, "--resume", "--tag", "math")
    assert rc == 2
    assert err.strip().splitlines()[-1].startswith(f"agenteval: error: {out}: --resume: the run")
    assert "selection.tags=" in err and "selection.where=none" in err
    rc, err = _run(ds, out, "--resume")  # no selection now: also a different run
    assert rc == 2 and "selection.selected=2" in err
    rc, err = _run(ds, out, "--resume", "--tag", "math", "--tag", "geo", "--where",
                   "metadata.tier=gold")  # fmt: skip
    assert rc == 0, err
    assert "2 trial(s) already recorded" in err and len(_ids(out)) == 2


def test_a_seeded_sample_is_the_same_twice_and_limit_takes_its_first(
    ds: Path, tmp_path: Path
) -> None:
    runs = []
    for name in ("s1", "s2"):
        rc, err = _run(ds, tmp_path / name, "--sample", "3", "--seed", "11")
        assert rc == 0, err
        runs.append(sorted(_ids(tmp_path / name)))
    assert runs[0] == runs[1] and len(runs[0]) == 3
    rc, err = _run(ds, tmp_path / "lim", "--sample", "3", "--seed", "11", "--limit", "2")
    assert rc == 0, err
    assert sorted(_ids(tmp_path / "lim")) == runs[0][:2]
    rc, err = _run(ds, tmp_path / "strat", "--sample", "0.6", "--stratify", "tag")
    assert rc == 0, err  # 3 of 5, one per first tag: math, geo, untagged
    first_tags = {next((c["tags"][0] for c in CASES if c["id"] == i and c.get("tags")), "")
                  for i in _ids(tmp_path / "strat")}  # fmt: skip
    assert first_tags == {"math", "geo", ""}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cases", "a1,zz", "--cases", "qq"], "field '--cases': 2 case id(s) not in the"
         " dataset: 'zz', 'qq'"),
        (["--tag", "nope"], "the selection (tag nope) keeps none of the 5 cases"),
        (["--where", "tier=gold"], "field '--where': unknown field 'tier'"),
        (["--where", "novalue"], "expects FIELD=VALUE"),
        (["--sample", "1.5"], "a rate must be between 0 and 1"),
        (["--sample", "2", "--stratify", "tag"], "a stratified sample of 2 cannot keep each"
         " of the 3 tags"),
        (["--stratify", "tag"], "--stratify applies to --sample"),
    ],
)  # fmt: skip
def test_bad_selections_exit_2_with_one_line_and_write_nothing(
    ds: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    out = tmp_path / "r"
    rc, err = _run(ds, out, *extra)
    assert rc == 2
    assert message in err, err
    assert len([x for x in err.splitlines() if x.startswith("agenteval: error")]) == 1
    assert "Traceback" not in err
    assert not (out / "trials.jsonl").exists()


def test_cases_file_and_rescore_of_a_selection(ds: Path, tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("# the failing ones\na2\n\nb1\n")
    full = tmp_path / "full"
    assert _run(ds, full)[0] == 0
    rc, err = _run(ds, tmp_path / "f", "--cases-file", ids, "--cases", "c1")
    assert rc == 0, err
    assert sorted(_ids(tmp_path / "f")) == ["a2", "b1", "c1"]

    r = run_cli("rescore", full, "--out", tmp_path / "rs", "--tag", "geo", "--quiet")
    assert r.returncode == 0, r.stderr
    assert sorted(_ids(tmp_path / "rs")) == ["b1", "b2"]
    assert read_header(tmp_path / "rs").settings["selection"] == {
        "tags": ["geo"],
        "selected": 2,
        "of": 5,
    }
    r = run_cli("rescore", tmp_path / "rs", "--out", tmp_path / "rs2", "--cases", "b2")
    assert r.returncode == 0, r.stderr
    sel = read_header(tmp_path / "rs2").settings["selection"]
    assert sel["cases"] == ["b2"] and sel["within"]["tags"] == ["geo"]
    r = run_cli("rescore", full, "--out", tmp_path / "rs3", "--cases", "nope")
    assert r.returncode == 2 and "'nope'" in r.stderr and not (tmp_path / "rs3").exists()


def test_judge_judges_only_the_selected_trials(ds: Path, tmp_path: Path) -> None:
    full = tmp_path / "full"
    assert _run(ds, full)[0] == 0
    with fake_server_process() as url:
        r = run_cli("judge", full, "--out", tmp_path / "j", "--rubric", "correctness",
                    "--judge-endpoint", url, "--judge-model", "j", "--no-judge-cache",
                    "--where", "id=a2", "--quiet")  # fmt: skip
    assert r.returncode == 4, r.stderr  # the fake judge reaches no verdict: exit 4 (docs/cli.md)
    trials = list(iter_trials(tmp_path / "j"))
    assert [t.case_id for t in trials] == ["a2"]
    assert "judge_correctness" in trials[0].scores
    assert read_header(tmp_path / "j").settings["selection"]["where"] == ["id=a2"]


def test_the_gate_over_a_selection_compares_it_and_says_so(ds: Path, tmp_path: Path) -> None:
    full, sel = tmp_path / "full", tmp_path / "sel"
    assert _run(ds, full)[0] == 0
    assert _run(ds, sel, "--tag", "math", fn="bad")[0] == 0
    r = run_cli("gate", full, sel, "--allow-underpowered")
    out = " ".join(r.stdout.split())  # the console wraps long lines
    assert r.returncode == 0, r.stdout + r.stderr  # the 3 unselected cases are not missing
    assert (
        "selection: the candidate run is a selection of its dataset (tag math, 2 of 5 cases);"
        " the gate compares the cases both runs have" in out
    )
    assert "3 baseline case(s) the candidate's selection left out are not compared" in out
    assert "on 2 shared cases" in out

    # a selected case with no trial still counts as missing: drop a2's trial
    lines = (sel / "trials.jsonl").read_text().splitlines()
    (sel / "trials.jsonl").write_text(
        "".join(x + "\n" for x in lines if json.loads(x)["case_id"] != "a2")
    )
    r = run_cli("gate", full, sel, "--allow-underpowered")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "4 baseline case(s) have no trial in the candidate" in " ".join(r.stdout.split())
