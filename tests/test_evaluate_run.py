"""The Run evaluate() returns: ``trials`` a sequence (still callable), the documented
attributes, and no temporary run directory left behind when ``out`` is omitted."""

from __future__ import annotations

import gc
import tempfile
from pathlib import Path

import pytest

from agenteval import Case, InputError, evaluate
from agenteval.errors import TooManyFailuresError

CASES = [
    {"id": "a", "input": "1+1?", "expected": "2"},
    {"id": "b", "input": "2+2?", "expected": "4"},
]


def answer(case: Case) -> str:
    return "2" if case.id == "a" else "5"


def broken(case: Case) -> str:
    raise RuntimeError("down")


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temporary directory, pointed at an empty directory of this test."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def test_trials_is_a_sequence_and_calling_it_still_iterates(tmp: Path) -> None:
    run = evaluate(CASES, answer)
    assert len(run.trials) == 2
    assert run.trials[0].case_id == "a" and run.trials[-1].case_id == "b"
    assert [t.case_id for t in run.trials[:1]] == ["a"]
    assert run.trials[1].scores["exact_match"].status == "failed"
    assert [t.case_id for t in run.trials()] == ["a", "b"]  # the method of earlier versions
    assert run.trials is run.trials  # read once
    assert [t.case_id for t in run.iter_trials()] == ["a", "b"]
    assert run.scores("exact_match") == [1.0, 0.0]
    assert run.summary_model.scorers["exact_match"].passed == 1
    assert run.header.dataset.cases == 2
    run.close()


def test_no_run_directory_is_left_behind_per_call(tmp: Path) -> None:
    dirs = []
    for _ in range(3):
        run = evaluate(CASES, answer)
        assert run.temporary and (run.run_dir / "run.json").is_file()
        dirs.append(run.run_dir)
        del run
    gc.collect()
    assert not any(d.exists() for d in dirs)
    assert list(tmp.iterdir()) == []


def test_close_and_with_remove_it_and_what_was_read_stays(tmp: Path) -> None:
    with evaluate(CASES, answer) as run:
        trials = run.trials
    assert not run.run_dir.exists() and list(tmp.iterdir()) == []
    assert run.trials is trials and run.summary["trials"] == 2
    run.close()  # again: nothing to do


def test_a_run_given_out_is_kept(tmp: Path, tmp_path: Path) -> None:
    run = evaluate(CASES, answer, out=tmp_path / "kept")
    assert not run.temporary
    run.close()
    del run
    gc.collect()
    assert (tmp_path / "kept" / "run.json").is_file()


def test_an_evaluate_that_raises_leaves_nothing(tmp: Path) -> None:
    with pytest.raises(InputError):
        evaluate([{"id": "a"}], answer)  # no input: refused before the agent runs
    assert list(tmp.iterdir()) == []


def test_too_many_failures_holds_the_run_until_dropped(tmp: Path) -> None:
    with pytest.raises(TooManyFailuresError) as e:
        evaluate(CASES, broken, max_failure_rate=0.1)
    held = e.value.run
    assert (held.run_dir / "run.json").is_file()
    del held, e
    gc.collect()
    assert list(tmp.iterdir()) == []
