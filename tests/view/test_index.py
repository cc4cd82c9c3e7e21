"""The per-run trial index: read once, grown incrementally, broken lines named."""

from __future__ import annotations

import shutil
from pathlib import Path

from _tree import FIXTURES, big_run, wait_for

from agenteval.rundir import TRIALS, RunWriter, iter_trials, read_header
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial
from agenteval.view.catalog import Catalog, find_run_dirs
from agenteval.view.index import TrialIndex, score_status


def test_index_matches_the_readers_and_grows_incrementally(tmp_path: Path) -> None:
    run = big_run(tmp_path / "big", n=20)
    idx = TrialIndex(run)
    assert idx.refresh() is True
    assert [(r.case_id, r.repeat) for r in idx.rows] == [t.key for t in iter_trials(run)]
    assert idx.refresh() is False  # nothing new: nothing read
    w, _done, _ = RunWriter.open_resume(run)
    with w:
        w.append(Trial(case_id="new1", output="x"), {"exact_match": Score(0.0, "no")})
        assert idx.refresh() is True and len(idx.rows) == 21
        rec, raw = idx.record(20)
        assert rec.case_id == "new1" and raw.endswith(b"\n")
        # a torn line is left for later, then read once complete
        with open(run / TRIALS, "ab") as f:
            f.write(b'{"case_id":"new2","output":"y","scores":{}')
        assert idx.refresh() is False and len(idx.rows) == 21
        with open(run / TRIALS, "ab") as f:
            f.write(b"}\n")
        assert idx.refresh() is True and idx.rows[-1].case_id == "new2"
    assert idx.error is None
    assert idx.rows[20].failed == ("exact_match",) and idx.rows[20].status == "fail"


def test_a_shorter_or_replaced_file_is_read_again(tmp_path: Path) -> None:
    run = big_run(tmp_path / "big", n=10)
    idx = TrialIndex(run)
    idx.refresh()
    lines = (run / TRIALS).read_bytes().splitlines(keepends=True)
    (run / TRIALS).write_bytes(b"".join(lines[:4]))
    assert idx.refresh() is True and len(idx.rows) == 4


def test_bad_lines_make_the_index_broken_with_the_readers_words(tmp_path: Path) -> None:
    run = big_run(tmp_path / "big", n=5)
    with open(run / TRIALS, "ab") as f:
        f.write(b'{"case_id":"b001","repeat":0,"output":"again","scores":{}}\n')
    idx = TrialIndex(run)
    idx.refresh()
    assert idx.error is not None
    assert idx.error.endswith(
        "trials.jsonl:6: a second trial for case 'b001' repeat 0 (first at line 2)"
    )
    run2 = big_run(tmp_path / "big2", n=3)
    with open(run2 / TRIALS, "ab") as f:
        f.write(b'{"case_id":"z","repeat":-1}\n')
    idx = TrialIndex(run2)
    idx.refresh()
    assert idx.error is not None and "trials.jsonl:4: field 'repeat'" in idx.error
    assert len(idx.rows) == 3


def test_format_1_scores_get_the_status_0_1_meant() -> None:
    assert score_status({"value": 1.0, "reason": "ok", "threshold": 1.0}) == "passed"
    assert score_status({"value": 0.4, "reason": "x", "threshold": 0.5}) == "failed"
    assert score_status({"value": None, "reason": "inconclusive: tie"}) == "inconclusive"
    assert score_status({"value": None, "reason": "n/a"}) == "not_applicable"
    assert score_status({"value": None, "reason": "x", "error": "boom"}) == "error"
    assert score_status({"status": "failed", "value": 0.0}) == "failed"
    run = FIXTURES / "demo_sloppy"
    idx = TrialIndex(run)
    idx.refresh()
    failed = {r.case_id: set(r.failed) for r in idx.rows}
    for rec in iter_trials(run):  # the same statuses as the migrating reader gives
        assert failed[rec.case_id] == {n for n, s in rec.scores.items() if s.status == "failed"}


def test_catalog_finds_runs_by_relative_key(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "x" / "old")
    (tmp_path / ".hidden").mkdir()
    shutil.copytree(FIXTURES / "repeats", tmp_path / ".hidden" / "r")
    found = find_run_dirs(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "x/old/demo_careful",
        "x/old/demo_sloppy",
        "x/old/repeats",
    ]  # not the hidden folder, not _made_with (no run.json, no trials.jsonl)
    cat = Catalog(tmp_path)
    assert cat.get("x/old/repeats") is not None
    assert cat.get("x/old/../old/repeats") is None and cat.get(str(tmp_path)) is None
    run = cat.get("x/old/demo_careful")
    assert run is not None
    run.refresh()
    assert run.header == read_header(tmp_path / "x" / "old" / "demo_careful")
    summary, reason = run.summary()
    assert reason is None and summary is not None and summary.trials == 8


def test_a_large_run_is_read_in_steps_usable_at_once(tmp_path: Path) -> None:
    run = big_run(tmp_path / "big", n=60)
    size = (run / TRIALS).stat().st_size
    idx = TrialIndex(run)
    idx.refresh(max_bytes=size // 6)
    assert idx.pending and 0 < len(idx.rows) < 60
    steps = 1
    while idx.pending:
        idx.refresh(max_bytes=size // 6)
        steps += 1
    assert steps >= 6 and [r.case_id for r in idx.rows] == [f"b{i:03d}" for i in range(60)]
    idx = TrialIndex(run)
    idx.refresh(max_bytes=1)  # a budget shorter than a line still reads one whole line
    assert len(idx.rows) == 1 and idx.pending


def test_catalog_reads_the_rest_in_the_background(tmp_path: Path) -> None:
    big_run(tmp_path / "big", n=80)
    run = Catalog(tmp_path).get("big")
    assert run is not None
    run.refresh(budget=2000)
    assert run.loading and len(run.index.rows) < 80 and run.summary() == (None, None)
    run.start_catch_up()
    wait_for(lambda: not run.loading)
    assert not run.loading and len(run.index.rows) == 80 and run.tags["b001"] == ("beta",)
    summary, reason = run.summary()
    assert reason is None and summary is not None and summary.trials == 80
