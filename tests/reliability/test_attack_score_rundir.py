"""Attacks on the score model (issue 13) and the run-directory integrity (issue 14).

Each test is an attack a careless or a hostile user could make, and failed before its fix:
hand-edited ``trials.jsonl``/``run.json``, a run from someone else naming code to import,
report files onto devices and other runs, a deleted lock file, and resumes that spell the
same run differently. Real ``agenteval`` subprocesses and real files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reliability_support import no_traceback, read_trials, run_cli, write_jsonl

from agenteval._util.outpaths import check_out_files
from agenteval.errors import EXIT_INPUT, EXIT_OK, InputError
from agenteval.rundir.lock import RunLock

pytestmark = pytest.mark.reliability

AGENT = "_integrity_agent:answer"


def _one_error(p: Any, *needles: str) -> str:
    assert p.returncode == EXIT_INPUT, (p.returncode, p.stderr)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("agenteval: error: "), p.stderr
    assert no_traceback([p.stderr])
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def _cases(d: Path, n: int = 2) -> Path:
    rows = [{"id": f"c{i}", "input": f"q{i}", "expected": "ok"} for i in range(n)]
    return write_jsonl(d / "cases.jsonl", rows)


def _run(tmp: Path, name: str = "run", *extra: str) -> Path:
    out = tmp / name
    p = run_cli("run", _cases(tmp), "--agent", AGENT, "--out", out, "--quiet", *extra, cwd=tmp)
    assert p.returncode == EXIT_OK, p.stderr
    return out


# --- hand-edited trials.jsonl and run.json -----------------------------------------------


def _first_score(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(trial: dict[str, Any]) -> None:
        edit(trial["scores"]["exact_match"])

    return change


TRIAL_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "negative threshold": (
        _first_score(lambda s: s.update(threshold=-1)),
        "score threshold must be within [0, 1], got -1",
    ),
    "threshold above 1": (
        _first_score(lambda s: s.update(threshold=2, status=None)),
        "score threshold must be within [0, 1], got 2",
    ),
    "status not a string": (
        _first_score(lambda s: s.update(status=["passed"])),
        "score status must be a string, got list",
    ),
    "status that contradicts the value (held before too)": (
        _first_score(lambda s: s.update(status="failed")),
        "status 'failed' contradicts value 1.0 with threshold 1.0",
    ),
    "score not an object": (
        lambda t: t["scores"].update(exact_match=5),
        "a score must be a JSON object, got int",
    ),
    "scores not an object": (lambda t: t.update(scores=[1]), "scores must be a JSON object"),
}


@pytest.mark.parametrize("attack", list(TRIAL_EDITS))
def test_a_hand_edited_score_is_one_clear_line(tmp_path: Path, attack: str) -> None:
    """Before: a threshold of -1 made every value pass and one of 2 made none pass, both
    reported as data; a non-object score or status gave Python's words ("'int' object has
    no attribute 'get'", "unhashable type: 'list'")."""
    run = _run(tmp_path)
    edit, message = TRIAL_EDITS[attack]
    trials = read_trials(run)
    edit(trials[0])
    write_jsonl(run / "trials.jsonl", trials)
    for argv in (("report", run), ("rescore", run, "--out", tmp_path / "new", "--quiet")):
        line = _one_error(run_cli(*argv, cwd=tmp_path), "trials.jsonl:1", message)
        assert "field 'scores'" in line
    assert not (tmp_path / "new").exists()


HEADER_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "format version 0": (lambda h: h.update(format_version=0), "format_version"),
    "negative format version": (lambda h: h.update(format_version=-3), "format_version"),
    "two scorers with one name": (
        lambda h: h["scorers"].append(h["scorers"][0]),
        "two scorers are named 'exact_match'",
    ),
}


@pytest.mark.parametrize("attack", list(HEADER_EDITS))
def test_a_hand_edited_run_json_is_refused_by_every_reader(tmp_path: Path, attack: str) -> None:
    """Before: format_version 0 or -3 read as a current run, and two specs with one name
    were reported (the second silently shadowed by the first) until rescore tripped over
    them without naming the file."""
    run = _run(tmp_path)
    edit, needle = HEADER_EDITS[attack]
    header = json.loads((run / "run.json").read_text())
    edit(header)
    (run / "run.json").write_text(json.dumps(header))
    for argv in (("report", run), ("rescore", run, "--out", tmp_path / "new", "--quiet")):
        _one_error(run_cli(*argv, cwd=tmp_path), "run.json", needle)


# --- a run from someone else names code to import ----------------------------------------

EVIL = """
import pathlib
pathlib.Path("IMPORTED").write_text("the module named by run.json was imported")

def fn(case, trial):
    return 0.0
"""


def test_rescore_imports_code_named_by_run_json_only_with_trust_run(tmp_path: Path) -> None:
    """Before: rescore imported any ``module:fn`` run.json named, from the current
    directory too: a run sent with an ``evil.py`` beside it ran that file on rescore."""
    run = _run(tmp_path)
    header = json.loads((run / "run.json").read_text())
    header["scorers"].append({"name": "evil", "ref": "evil:fn"})
    (run / "run.json").write_text(json.dumps(header))
    trials = read_trials(run)
    for t in trials:
        t["scores"]["evil"] = {"status": "passed", "value": 1.0, "reason": "stored"}
    write_jsonl(run / "trials.jsonl", trials)
    (tmp_path / "evil.py").write_text(EVIL)

    p = run_cli("rescore", run, "--out", tmp_path / "kept", "--quiet", cwd=tmp_path)
    assert p.returncode == EXIT_OK, p.stderr
    assert not (tmp_path / "IMPORTED").exists()
    assert p.stderr.splitlines() == [
        "agenteval: rescore: scorer 'evil' not recomputed: run.json names its code (evil:fn)"
        " and rescore imports code named by a run only with --trust-run; its stored scores"
        " are kept (or give --scorer evil:fn)"
    ]
    assert [t["scores"]["evil"]["reason"] for t in read_trials(tmp_path / "kept")] == ["stored"] * 2
    assert json.loads((tmp_path / "kept" / "run.json").read_text())["scorers"][-1]["ref"] == (
        "evil:fn"
    )

    p = run_cli("rescore", run, "--out", tmp_path / "trusted", "--quiet", "--trust-run",
                cwd=tmp_path)  # fmt: skip
    assert p.returncode == EXIT_OK and p.stderr == "", p.stderr
    assert (tmp_path / "IMPORTED").exists()
    assert [t["scores"]["evil"]["status"] for t in read_trials(tmp_path / "trusted")] == [
        "failed"
    ] * 2


# --- output paths ------------------------------------------------------------------------


def test_an_html_report_is_never_renamed_over_a_device_or_a_fifo(tmp_path: Path) -> None:
    """Before: ``--html /dev/stdout`` renamed the report over the /dev/stdout link itself
    (as root it replaced the device link with a regular file; the report never reached
    stdout), and a FIFO was replaced by a regular file. Outputs written in place
    (``--json``, ``--junit``, ``--markdown``) may still go to /dev/stdout."""
    run = _run(tmp_path)
    for dev in ("/dev/stdout", "/dev/null"):  # checked, never written: no subprocess here
        with pytest.raises(InputError, match="is not a regular file"):
            check_out_files([("--html", dev)], [("run", run)], renamed=("--html",))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _one_error(run_cli("report", run, "--html", fifo, cwd=tmp_path), "is not a regular file")
    assert fifo.is_fifo()
    p = run_cli("report", run, "--json", "/dev/stdout", cwd=tmp_path)
    assert p.returncode == EXIT_OK, p.stderr
    assert json.loads(p.stdout[: p.stdout.rindex("}") + 1])["trials"] == 2


def test_a_report_is_never_written_over_another_runs_files(tmp_path: Path) -> None:
    """Before: only the reported run's own files were protected: ``report a --html
    b/run.json`` destroyed run b."""
    a = _run(tmp_path, "a")
    b = tmp_path / "b"
    assert run_cli("rescore", a, "--out", b, "--quiet", cwd=tmp_path).returncode == EXIT_OK
    before = {n: (b / n).read_bytes() for n in ("run.json", "trials.jsonl", "cases.jsonl")}
    for name in before:
        _one_error(
            run_cli("report", a, "--html", b / name, cwd=tmp_path),
            f"is the run's own file {name} in {b}",
        )
    assert {n: (b / n).read_bytes() for n in before} == before
    assert run_cli("report", a, "--html", tmp_path / "ok.html", cwd=tmp_path).returncode == 0


def test_a_new_run_never_goes_inside_another_run(tmp_path: Path) -> None:
    """Before: ``rescore a --out b/inner`` (and run/score/judge alike) made a run inside
    run b, which b's own resume then found as a stranger in its folder."""
    a = _run(tmp_path, "a")
    b = _run(tmp_path, "b")
    _one_error(
        run_cli("rescore", a, "--out", b / "inner", "--quiet", cwd=tmp_path),
        "--out",
        "is inside the run directory",
    )
    p = run_cli("run", tmp_path / "cases.jsonl", "--agent", AGENT, "--out", b / "x" / "y",
                "--quiet", cwd=tmp_path)  # fmt: skip
    _one_error(p, "is inside the run directory")
    assert sorted(os.listdir(b)) == ["cases.jsonl", "run.json", "run.lock", "trials.jsonl"]


# --- locks -------------------------------------------------------------------------------


def test_deleting_run_lock_while_it_is_held_lets_no_second_writer_in(tmp_path: Path) -> None:
    """Before: the lock was on the file run.lock; a user who deleted it ("a stale lock")
    while a run was writing let the next writer create a new run.lock and lock that."""
    run = _run(tmp_path)
    first = RunLock.acquire(run, "agenteval run")
    try:
        (run / "run.lock").unlink()
        p = run_cli("run", tmp_path / "cases.jsonl", "--agent", AGENT, "--out", run,
                    "--quiet", "--resume", cwd=tmp_path)  # fmt: skip
        _one_error(p, "another agenteval process is writing this run")
        with pytest.raises(InputError, match="another agenteval process"):
            RunLock.acquire(run, "second")
    finally:
        first.release()
    second = RunLock.acquire(run, "after")  # released: free again
    second.release()


# --- fingerprint: the same run spelled differently ----------------------------------------

SCORERS = "def s1(case, trial):\n    return 1.0\n\n\ndef s2(case, trial):\n    return 0.0\n"


def test_resume_accepts_the_same_run_spelled_differently(tmp_path: Path) -> None:
    """Before: reordered ``--scorer`` options and a ``--limit`` at or above the number of
    cases (the same cases either way) were refused as a different run. (Relative and
    absolute paths were already equivalent: held, and kept so here.)"""
    (tmp_path / "mysc.py").write_text(SCORERS)
    cases = _cases(tmp_path)
    run = _run(tmp_path, "run", "--scorer", "mysc:s1", "--scorer", "mysc:s2", "--limit", "5")
    again = [
        ("--scorer", "mysc:s2", "--scorer", "mysc:s1", "--limit", "5"),
        ("--scorer", "mysc:s1", "--scorer", "mysc:s2"),
        ("--scorer", "mysc:s1", "--scorer", "mysc:s2", "--limit", "2"),
    ]
    for extra in again:
        # the run was started with absolute paths; resumed with relative ones
        p = run_cli("run", "cases.jsonl", "--agent", AGENT, "--out", "run", "--quiet",
                    "--resume", *extra, cwd=tmp_path)  # fmt: skip
        assert p.returncode == EXIT_OK, (extra, p.stderr)
    assert len(read_trials(run)) == 2
    # still refused: a scorer fewer, a limit that selects fewer cases
    p = run_cli("run", cases, "--agent", AGENT, "--out", run, "--quiet", "--resume",
                "--scorer", "mysc:s1", cwd=tmp_path)  # fmt: skip
    _one_error(p, "the run was made with scorers=s2; now scorers=none")
    both = ("--scorer", "mysc:s1", "--scorer", "mysc:s2")
    p = run_cli("run", cases, "--agent", AGENT, "--out", run, "--quiet", "--resume", *both,
                "--limit", "1", cwd=tmp_path)  # fmt: skip
    _one_error(p, "limit=none; now limit=1")


def test_rescore_and_judge_refuse_a_source_run_still_being_written(tmp_path: Path) -> None:
    """Before: ``rescore``/``judge`` of a run another process was still writing copied the
    trials written so far into a new run that looked complete (its run.json finished)."""
    src = _run(tmp_path)
    judge = ("--rubric", "correctness", "--judge-endpoint", "http://127.0.0.1:9/v1")
    judge += ("--judge-model", "m", "--quiet")
    writer = RunLock.acquire(src, "agenteval run")  # a real flock: the writer of a live run
    try:
        before = {n: (src / n).read_bytes() for n in os.listdir(src)}
        for argv in (("rescore", src, "--quiet"), ("judge", src, *judge)):
            p = run_cli(*argv, "--out", tmp_path / "copy", cwd=tmp_path)
            _one_error(p, "is still being written", f"pid {os.getpid()}", "wait for it to end")
            assert not (tmp_path / "copy").exists()
        assert {n: (src / n).read_bytes() for n in os.listdir(src)} == before
    finally:
        writer.release()
    p = run_cli("rescore", src, "--out", tmp_path / "copy", "--quiet", cwd=tmp_path)
    assert p.returncode == EXIT_OK, p.stderr


def test_scorer_settings_that_are_not_json_are_refused_when_the_scorer_is_made() -> None:
    """Before: ``Scorer(fn, settings={"x": object()})`` was accepted and the run then
    failed writing run.json with pydantic's serialisation error."""
    from agenteval.scoring.spec import Scorer

    def fn(case: object, trial: object) -> float:
        return 1.0

    for bad in ({"x": object()}, {"x": float("nan")}, {"x": {1, 2}}):
        with pytest.raises(ValueError, match="scorer 'fn': settings must be JSON"):
            Scorer(fn, settings=bad)
    assert Scorer(fn, settings={"tools": [{"name": "a"}], "n": 1.5}).spec.settings["n"] == 1.5


def test_a_scorer_returning_a_threshold_outside_0_1_gets_a_scorer_error() -> None:
    """Before: ``Score(0.5, "x", threshold=2)`` was stored as a failure of the agent (and
    threshold -1 as a pass); now it is a scorer error, never counted against the agent."""
    from agenteval.cases.case import Case
    from agenteval.scoring.apply import Scorers
    from agenteval.scoring.score import Score
    from agenteval.trials.trial import Trial

    def bad_mark(case: object, trial: object) -> Score:
        return Score(0.5, "x", threshold=2)

    (s,) = Scorers([bad_mark]).apply(Case(id="a", input="q"), Trial(case_id="a")).values()
    assert s.status == "error" and "score threshold must be within [0, 1], got 2" in s.reason


def test_a_report_onto_a_hard_link_of_a_run_file_is_refused(tmp_path: Path) -> None:
    """Before: ``--html notes.jsonl`` where notes.jsonl is a hard link to the run's
    trials.jsonl was accepted (the same file by another name; on a case-insensitive file
    system ``RUN/Run.json`` is the same case of this bug)."""
    run = _run(tmp_path)
    link = tmp_path / "notes.jsonl"
    os.link(run / "trials.jsonl", link)
    before = link.read_bytes()
    p = run_cli("report", run, "--json", link, cwd=tmp_path)
    _one_error(p, f"--json {link} is the run's own file trials.jsonl")
    assert link.read_bytes() == before and os.path.samefile(link, run / "trials.jsonl")
