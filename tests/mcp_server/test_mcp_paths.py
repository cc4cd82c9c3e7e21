"""What a client may name (datasets, agent files, new runs), and runs started with --allow-run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from _mcp_runs import small_folder

from agenteval.cli import FIELD_FLAGS
from agenteval.errors import InputError
from agenteval.mcp_server.jobs import REFUSED, Jobs, agent_target
from agenteval.mcp_server.paths import dataset_file, new_run_dir
from agenteval.mcp_server.tools import RunsFolder
from agenteval.rundir import iter_trials


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "cases.jsonl").write_text('{"id": "x", "input": "q"}\n')
    r = small_folder(tmp_path / "root")
    (r / "data").mkdir()
    (r / "out.jsonl").symlink_to(outside / "cases.jsonl")
    (r / "in.jsonl").symlink_to(r / "small.jsonl")
    (r / "outdir").symlink_to(outside, target_is_directory=True)
    (r / ".hidden.jsonl").write_text("{}\n")
    os.mkfifo(r / "pipe.jsonl")
    return r.resolve()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../outside/cases.jsonl", r"leaves the runs folder \('..'\)"),
        ("data/../../outside/cases.jsonl", "leaves the runs folder"),
        ("/etc/passwd", "must be relative to the runs folder"),
        ("out.jsonl", "is outside the runs folder"),
        ("outdir/cases.jsonl", "is outside the runs folder"),
        (".hidden.jsonl", "hidden"),
        ("pipe.jsonl", "is not a regular file"),
        ("data", "is not a regular file"),
        ("missing.jsonl", "does not exist"),
        ("", "is empty"),
        ("a\x00b", "NUL"),
    ],
)
def test_a_dataset_outside_the_folder_or_not_a_file_is_refused(
    root: Path, name: str, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        dataset_file(name, root)


def test_a_dataset_inside_the_folder_is_resolved(root: Path) -> None:
    assert dataset_file("small.jsonl", root) == root / "small.jsonl"
    assert dataset_file("./in.jsonl", root) == root / "small.jsonl"  # a link inside is fine


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("small.jsonl", "exists already"),
        ("../x", "leaves the runs folder"),
        ("outdir/new", "leads outside the runs folder"),
        ("small.jsonl/new", "through a file"),
        ("-rf", "is not a plain name"),
        ("a b", "is not a plain name"),
        ("/tmp/x", "must be relative"),
    ],
)
def test_a_new_run_name_stays_a_new_folder_inside(root: Path, name: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        new_run_dir(name, root)
    assert new_run_dir("runs/new-1", root) == root / "runs" / "new-1"


def test_agent_targets(root: Path) -> None:
    assert agent_target("pkg.mod:answer", root) == "pkg.mod:answer"
    assert agent_target("echo_agent.py:answer", root) == f"{root / 'echo_agent.py'}:answer"
    for bad, message in [
        ("--help", "is not package.module:function"),
        ("mod", "is not package.module:function"),
        ("../outside/x.py:fn", "leaves the runs folder"),
        ("missing.py:fn", "does not exist"),
        ("", "agent is empty"),
    ]:
        with pytest.raises(InputError, match=message):
            agent_target(bad, root)


def test_without_allow_run_nothing_is_started(root: Path) -> None:
    jobs = Jobs(root, allowed=False)
    with pytest.raises(InputError, match=r"without allow_run$") as refused:
        jobs.start("small.jsonl", "echo_agent.py:answer", "runs/x")
    assert not (root / "runs").exists() and not jobs.jobs
    # a library caller reads the setting; the command line (agenteval mcp) its flag
    assert refused.value.fields == ("allow_run",) and str(REFUSED) == str(refused.value)
    shown = refused.value.renamed(FIELD_FLAGS)
    assert shown is not None and str(shown).endswith("started without --allow-run")


def _wait(jobs: Jobs, run: str) -> dict[str, object]:
    deadline = time.monotonic() + 120
    while jobs.jobs[run].proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    return jobs.jobs[run].status()


def test_an_allowed_run_writes_a_new_run_in_the_folder(root: Path) -> None:
    """Slower (three `agenteval run` child processes, ~2 s each on an idle machine)."""
    jobs = Jobs(root, allowed=True)
    try:
        job = jobs.start("small.jsonl", "echo_agent.py:answer", "runs/echo", concurrency=2)
        assert job.status()["state"] in ("running", "done")
        status = _wait(jobs, "runs/echo")
        assert status["state"] == "done" and status["exit_code"] == 0, status
        outputs = {t.case_id: t.output for t in iter_trials(root / "runs" / "echo")}
        assert outputs == {"m1": "4", "m2": "no idea", "m3": "no idea"}
        (row,) = RunsFolder(root).list_runs()["runs"]
        assert row["id"] == "runs/echo" and row["state"] == "finished" and row["trials"] == 3
        with pytest.raises(InputError, match="exists already"):
            jobs.start("small.jsonl", "echo_agent.py:answer", "runs/echo")
        (root / "echo_agent.py").write_text("def answer(case):\n    return 'Paris'\n")
        jobs.start("small.jsonl", "echo_agent.py:answer", "runs/edited")  # the edited code runs
        assert _wait(jobs, "runs/edited")["exit_code"] == 0
        outputs = {t.case_id: t.output for t in iter_trials(root / "runs" / "edited")}
        assert outputs == {"m1": "Paris", "m2": "Paris", "m3": "Paris"}
        (root / "bad.jsonl").write_text('{"id": "b1"}\n')  # no input: refused by `run`
        jobs.start("bad.jsonl", "echo_agent.py:answer", "runs/bad")
        bad = _wait(jobs, "runs/bad")
        assert bad["exit_code"] == 2 and "bad.jsonl:1" in str(bad["message"]), bad
    finally:
        jobs.close()


def test_bad_run_settings_start_nothing(root: Path) -> None:
    jobs = Jobs(root, allowed=True)
    for kwargs, message in [
        ({"limit": 0}, "limit"),
        ({"repeats": 0}, "repeats"),
        ({"concurrency": 1000}, "concurrency"),
        ({"timeout_s": -1.0}, "timeout_s"),
    ]:
        with pytest.raises(InputError, match=message):
            jobs.start("small.jsonl", "echo_agent.py:answer", "runs/x", **kwargs)  # type: ignore[arg-type]
    assert not jobs.jobs and not (root / "runs").exists()


def test_close_stops_a_run_still_going(root: Path) -> None:
    (root / "slow_agent.py").write_text("import time\n\ndef answer(case):\n    time.sleep(60)\n")
    jobs = Jobs(root, allowed=True)
    job = jobs.start("small.jsonl", "slow_agent.py:answer", "runs/slow", concurrency=1)
    deadline = time.monotonic() + 60
    while not (root / "runs" / "slow" / "trials.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the run has started: its signal handlers are in place
    time.sleep(0.5)
    (row,) = RunsFolder(root).list_runs()["runs"]
    assert row["id"] == "runs/slow" and row["state"] == "writing"
    assert job.status()["state"] == "running"
    jobs.close()
    assert job.proc.returncode == 143  # stopped by SIGTERM, gracefully: not killed
    trials = list(iter_trials(root / "runs" / "slow"))
    assert [t.failure.cause if t.failure else None for t in trials] == ["cancelled"]
