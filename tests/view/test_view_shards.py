"""docs/view.md "Sharded runs": a window of ``monitor --replica`` shards is ONE run in a real
``agenteval view``, with the trials, repeats and summary ``agenteval report`` reads."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _runbuild import bad, ok, write_run
from _tree import Viewer, wait_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.gate.paired import compare_runs
from agenteval.report.terminal import fmt_rate
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, iter_trials, write_cases
from agenteval.summary.compute import summarize
from agenteval.trials.trial import Failure, Trial
from agenteval.view.catalog import RunState, find_run_dirs
from agenteval.view.shards import ShardedIndex

HOUR = 3600
START = int(datetime(2026, 12, 2, 1, tzinfo=UTC).timestamp())


def _header(start: int = START) -> RunHeader:
    return RunHeader(
        kind="score",
        agent={"type": "monitor"},
        dataset=DatasetRef(path=None),
        scorers=["exact_match"],
        settings={"monitor": {"window_s": HOUR, "window_start": start}},
    )


def _trial(cid: str, repeat: int, *, output: str = "4", failure: str | None = None) -> Trial:
    return Trial(
        case_id=cid,
        repeat=repeat,
        output=None if failure else output,
        failure=Failure(cause=failure, message="slow") if failure else None,
    )


def _shard(d: Path, cases: list[str], trials: list[tuple[Trial, bool]], start: int = START) -> None:
    with RunWriter.create(d, _header(start)) as w:
        write_cases(d, [Case(id=c, input=f"q {c}", tags=[f"t-{c}"]) for c in cases])
        for t, passed in trials:
            w.append(t, {} if t.failure else {"exact_match": ok() if passed else bad()})
        w.finish(None)


def _window(d: Path) -> Path:
    """Shard a: c1 twice (the second wrong), c2. Shard b: c1 once more, c4 timed out."""
    _shard(
        d / "a",
        ["c1", "c2"],
        [(_trial("c1", 0), True), (_trial("c1", 1), False), (_trial("c2", 0), True)],
    )
    _shard(
        d / "b", ["c1", "c4"], [(_trial("c1", 0), True), (_trial("c4", 0, failure="timeout"), True)]
    )
    return d


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shards")
    _window(root / "mon" / "2026-12-02T01")
    later = root / "mon" / "2026-12-02T02"
    _shard(
        later / "a", ["c1", "c2"], [(_trial("c1", 0), False), (_trial("c2", 0), True)], START + HOUR
    )
    _shard(later / "b", ["c1"], [(_trial("c1", 0), False)], START + HOUR)
    broken = _window(root / "mon" / "2026-12-02T03")
    with open(broken / "b" / "trials.jsonl", "ab") as f:
        f.write(b'{"case_id": \n')
    for name in ("trials.jsonl", "cases.jsonl"):  # a shard's file is a FIFO
        fifo = _window(root / "fifo" / f"2026-12-02T01-{name.split('.')[0]}")
        (fifo / "b" / name).unlink()
        os.mkfifo(fifo / "b" / name)
    cases = [Case(id="c1", input="q", expected="4")]
    for name in ("x", "y"):  # a folder of ordinary runs is not a sharded run
        write_run(root / "plain" / name, cases, [(_trial("c1", 0), {"exact_match": ok()})])
    return root


@pytest.fixture(scope="module")
def view(tree: Path) -> Iterator[Viewer]:
    v = Viewer(tree)
    yield v
    v.stop()


def _trials(view: Viewer, key: str, qs: str = "") -> dict[str, Any]:
    status, _, body = view.get(f"/api/trials?run={key}&limit=500&{qs}")
    assert status == 200, body
    out: dict[str, Any] = json.loads(body)
    return out


def test_a_window_of_shards_is_listed_once_and_a_folder_of_runs_is_not_one(tree: Path) -> None:
    mon = tree / "mon"
    assert find_run_dirs(tree) == [
        tree / "fifo" / "2026-12-02T01-cases",
        tree / "fifo" / "2026-12-02T01-trials",
        mon / "2026-12-02T01",
        mon / "2026-12-02T02",
        mon / "2026-12-02T03",
        tree / "plain" / "x",
        tree / "plain" / "y",
    ]
    # the one window of a DIR written without --replica is the run, not a shard of DIR
    lone = tree.parent / "lone"
    _shard(lone / "2026-12-02T01", ["c1"], [(_trial("c1", 0), True)])
    assert find_run_dirs(lone) == [lone / "2026-12-02T01"]


def test_the_runs_list_names_the_window_and_not_its_shards(view: Viewer) -> None:
    page = view.get("/")[2].decode()
    assert 'href="/run?run=mon%2F2026-12-02T01"' in page or 'run=mon/2026-12-02T01"' in page
    assert "2026-12-02T01/a" not in page and "2026-12-02T01/b" not in page
    assert "plain/x" in page and "plain/y" in page


def test_trials_and_repeats_are_the_ones_report_reads(view: Viewer, tree: Path) -> None:
    window = tree / "mon" / "2026-12-02T01"
    truth = [(t.case_id, t.repeat) for t in iter_trials(window)]
    assert truth == [("c1", 0), ("c1", 1), ("c2", 0), ("c1", 2), ("c4", 0)]
    body = _trials(view, "mon/2026-12-02T01")
    assert [(r["case_id"], r["repeat"]) for r in body["rows"]] == truth
    assert [r["status"] for r in body["rows"]] == ["pass", "fail", "pass", "pass", "failure"]
    assert _trials(view, "mon/2026-12-02T01", "tag=t-c4")["matched"] == 1  # b's snapshot
    assert _trials(view, "mon/2026-12-02T01", "failed=exact_match")["matched"] == 1
    page2 = _trials(view, "mon/2026-12-02T01", "offset=3&limit=2")
    assert [(r["i"], r["case_id"], r["repeat"]) for r in page2["rows"]] == [
        (3, "c1", 2),
        (4, "c4", 0),
    ]
    # the trial page: shard b's first trial, numbered on after shard a's two repeats of c1
    trial = view.get("/trial?run=mon/2026-12-02T01&i=3")[2].decode()
    assert '<span class="muted">repeat 2</span>' in trial and "q c1" in trial
    assert view.get("/trial?run=mon/2026-12-02T01&i=5")[0] == 404
    summary = summarize(window)
    status = json.loads(view.get("/api/status?run=mon/2026-12-02T01")[2])
    assert (status["trials"], status["failed"], status["finished"]) == (5, 1, True)
    assert (summary.trials, summary.failed) == (5, 1)
    run = view.get("/run?run=mon/2026-12-02T01")[2].decode()
    assert "This run is broken" not in run
    em = summary.scorers["exact_match"]
    assert em.pass_rate == pytest.approx(3 / 4)
    row = run.split("<td>exact_match", 1)[1].split("</tr>", 1)[0]
    cells = [fmt_rate(em.pass_rate), str(em.applicable), str(em.errors)]
    assert all(f">{c}<" in row for c in cells), (row, cells)


def test_compare_two_windows_gives_the_gate_verdict(view: Viewer, tree: Path) -> None:
    expected = compare_runs(tree / "mon" / "2026-12-02T01", tree / "mon" / "2026-12-02T02")
    page = view.get("/compare?a=mon/2026-12-02T01&b=mon/2026-12-02T02")[2].decode()
    assert f'<span id="verdict-word">{expected.verdict}</span>' in page


def test_a_broken_shard_shows_why(view: Viewer) -> None:
    page = view.get("/")[2].decode()
    assert "Broken runs" in page and "2026-12-02T03/b/trials.jsonl:3: not valid JSON" in page
    status = json.loads(view.get("/api/status?run=mon/2026-12-02T03")[2])
    assert "2026-12-02T03/b/trials.jsonl:3" in status["error"]


def test_a_shard_whose_file_is_a_fifo_is_broken_and_blocks_nothing(view: Viewer) -> None:
    for what in ("trials", "cases"):
        key = f"fifo/2026-12-02T01-{what}"
        for _ in range(12):  # more requests than the executor has threads
            assert view.get(f"/run?run={key}")[0] == 200
            status = json.loads(view.get(f"/api/status?run={key}")[2])
            assert (
                f"2026-12-02T01-{what}/b/{what}.jsonl: is not a regular file (a FIFO"
                in (status["error"])
            ), status
        assert view.get(f"/trial?run={key}&i=0")[0] == 200


def test_a_shard_linked_to_outside_the_folder_is_not_served(tmp_path: Path) -> None:
    root, outside = tmp_path / "viewed", tmp_path / "secret"
    _window(outside / "w")
    (root / "w").mkdir(parents=True)
    (root / "w" / "a").symlink_to(outside / "w" / "a")
    (root / "w" / "b").symlink_to(outside / "w" / "b")
    _window(root / "inner")
    (root / "linked").mkdir()
    (root / "linked" / "a").symlink_to(root / "inner" / "a")  # inside: fine
    assert find_run_dirs(root) == [root / "inner", root / "linked"]


def test_a_shard_growing_while_viewed_is_shown_as_it_grows(tmp_path: Path) -> None:
    window = tmp_path / "mon" / "2026-12-02T01"
    _shard(window / "a", ["c1"], [(_trial("c1", 0), True)])
    b = RunWriter.create(window / "b", _header())
    write_cases(window / "b", [Case(id="c1", input="q c1")])
    v = Viewer(tmp_path, poll=0.2)
    try:
        key = "mon/2026-12-02T01"
        assert _trials(v, key)["total"] == 1
        assert '<p id="live" class="live">' in v.get(f"/run?run={key}")[2].decode()
        status = json.loads(v.get(f"/api/status?run={key}")[2])
        assert status["writing"].startswith("shard b: pid ") and not status["finished"]
        b.append(_trial("c1", 0), {"exact_match": bad()})
        b.append(_trial("c1", 1), {"exact_match": ok()})
        wait_for(lambda: _trials(v, key)["total"] == 3)
        rows = _trials(v, key)["rows"]
        assert [(r["case_id"], r["repeat"]) for r in rows] == [("c1", 0), ("c1", 1), ("c1", 2)]
        # the earlier shard grows too: shard b's repeats are numbered on after it again
        a, _, _ = RunWriter.open_resume(window / "a")
        with a:
            a.append(_trial("c1", 1), {"exact_match": ok()})
        wait_for(lambda: _trials(v, key)["total"] == 4)
        rows = _trials(v, key)["rows"]
        got = [(r["case_id"], r["repeat"], r["status"]) for r in rows]
        assert got == [("c1", 0, "pass"), ("c1", 1, "pass"), ("c1", 2, "fail"), ("c1", 3, "pass")]
        assert [g[:2] for g in got] == [(t.case_id, t.repeat) for t in iter_trials(window)]
        _shard(window / "c", ["c9"], [(_trial("c9", 0), True)])  # a replica joins
        wait_for(lambda: _trials(v, key)["total"] == 5)
        assert _trials(v, key)["rows"][-1]["case_id"] == "c9"
        b.finish(None)
        b.close()
        wait_for(lambda: json.loads(v.get(f"/api/status?run={key}")[2])["finished"])
        summary = summarize(window)
        run = v.get(f"/run?run={key}")[2].decode()
        assert "This run is broken" not in run and 'class="live hidden"' in run
        pass_rate = fmt_rate(summary.scorers["exact_match"].pass_rate)  # 4 of 5
        assert summary.trials == 5 and f">{pass_rate}<" in run
    finally:
        b.close()
        v.stop()


def test_the_index_of_shards_pages_record_by_record(tree: Path) -> None:
    window = tree / "mon" / "2026-12-02T01"
    idx = ShardedIndex([window / "a", window / "b"])
    while True:  # read in steps of a few bytes, as a page over a large run does
        idx.refresh(max_bytes=64)
        if not idx.pending:
            break
    truth = list(iter_trials(window))
    assert [(r.case_id, r.repeat) for r in idx.rows] == [(t.case_id, t.repeat) for t in truth]
    for i, t in enumerate(truth):
        rec, _ = idx.record(i)
        assert (rec.case_id, rec.repeat, rec.output) == (t.case_id, t.repeat, t.output)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(["c1", "c2", "c3"]), st.integers(0, 3)),
        max_size=25,
    ),
    budget=st.sampled_from([1, 40, 200, None]),
)
def test_the_index_of_growing_shards_is_what_report_reads(
    steps: list[tuple[int, str, int]], budget: int | None
) -> None:
    """Trials appended to any of three shards in any order, the index refreshed in steps of
    any size in between: its rows are always iter_trials' (case ids, repeats, order), and
    each record is the trial iter_trials gives."""
    with tempfile.TemporaryDirectory() as tmp:
        window = Path(tmp) / "w"
        writers = [RunWriter.create(window / name, _header()) for name in "abc"]
        idx = ShardedIndex([window / name for name in "abc"])
        used: dict[tuple[int, str], set[int]] = {}
        try:
            for shard, cid, repeat in steps:
                taken = used.setdefault((shard, cid), set())
                if repeat in taken:
                    continue  # a shard holds each (case id, repeat) once
                taken.add(repeat)
                writers[shard].append(_trial(cid, repeat, output=f"{shard}{cid}{repeat}"), {})
                idx.refresh(max_bytes=budget)
                while idx.pending:
                    idx.refresh(max_bytes=budget)
                truth = list(iter_trials(window))
                assert [(r.case_id, r.repeat) for r in idx.rows] == [
                    (t.case_id, t.repeat) for t in truth
                ]
            for i, t in enumerate(iter_trials(window)):
                rec, _ = idx.record(i)
                assert (rec.case_id, rec.repeat, rec.output) == (t.case_id, t.repeat, t.output)
        finally:
            for w in writers:
                w.close()


def test_shards_that_disagree_mark_the_window_broken_naming_the_shard(tmp_path: Path) -> None:
    window = _window(tmp_path / "w")
    head = json.loads((window / "b" / "run.json").read_text())
    head["scorers"] = []
    (window / "b" / "run.json").write_text(json.dumps(head))
    run = RunState("w", window)
    run.refresh()
    assert run.error is not None
    assert f"{window / 'b' / 'run.json'}: is a shard with another scorers than shard a" in (
        run.error
    )
    assert run.summary() == (None, run.error)


def test_runs_df_lists_a_window_of_shards_as_one_run(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from agenteval.frames import runs_df

    window = _window(tmp_path / "mon" / "2026-12-02T01")
    df = runs_df(tmp_path)
    assert list(df["run"]) == ["mon/2026-12-02T01"]
    assert int(df["trials"].iloc[0]) == summarize(window).trials == 5
