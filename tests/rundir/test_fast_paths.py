"""The rescore fast paths of rundir/ give exactly what the slow ones gave."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import case_from_run
from agenteval.rundir import RunHeader, RunWriter
from agenteval.rundir.cases import RunCases
from agenteval.rundir.header import TRIALS
from agenteval.rundir.trials import _dumps, _frag
from agenteval.scoring.score import STATUSES, Score
from agenteval.summary.sources import SnapshotIndex, case_ids, case_tags
from agenteval.trials.trial import Trial

_unit = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def _scores(draw: st.DrawFn) -> Score:
    status = draw(st.sampled_from(STATUSES))
    threshold = draw(_unit | st.sampled_from([0, 1]))
    reason = draw(st.text())
    if status == "error":
        return Score(None, reason, threshold, error=draw(st.none() | st.text()), status="error")
    if status in ("not_applicable", "inconclusive"):
        return Score(None, reason, threshold, status=status)
    value = draw(_unit)
    return Score(value, reason, threshold)


@settings(max_examples=500, deadline=None)
@given(st.text(), _scores())
def test_a_score_fragment_is_the_encoders_text(name: str, score: Score) -> None:
    assert _frag(name, score) == _dumps(name) + ":" + _dumps(score.to_dict())


def _snapshot(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


TOOLS = [
    {"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}},
    {"name": "search", "description": "find", "x-idempotent": False},
]


def test_cases_sharing_a_tool_list_read_as_each_alone(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": f"c{i}", "input": f"q{i}", "tools": TOOLS, "tags": ["a"], "extra": i}
        for i in range(5)
    ]
    rows.append({"id": "other", "input": "q", "tools": TOOLS[:1]})
    rows.append({"id": "none", "input": "q"})
    run = _snapshot(tmp_path, rows)
    cases = RunCases(run)
    try:
        for row in rows:
            got, want = cases.get(str(row["id"])), case_from_run(json.dumps(row))
            assert got == want
            assert got.model_dump_json() == want.model_dump_json()
            assert got.model_fields_set == want.model_fields_set
        assert cases.get("c1").tools is cases.get("c3").tools  # normalised once, shared
        assert cases.get("other").tools != cases.get("c1").tools
    finally:
        cases.close()


def test_a_bad_case_after_a_shared_tool_list_fails_as_before(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": "a", "input": "q", "tools": TOOLS},
        {"id": "b", "input": 3, "tools": TOOLS},  # input must be a string or messages
    ]
    run = _snapshot(tmp_path, rows)
    cases = RunCases(run)
    try:
        cases.get("a")
        try:
            cases.get("b")
        except Exception as e:  # the same InputError the whole-line read gives
            assert "cases.jsonl:2" in str(e) and "bad case" in str(e)
        else:  # pragma: no cover
            raise AssertionError("a bad case was read")
    finally:
        cases.close()


def test_the_snapshot_index_gives_case_tags_and_case_ids(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": "a", "input": "q", "tags": ["x", "y"]},
        {"id": "b", "input": "q"},
        {"id": "c", "input": "q", "tags": ["x", "y"]},
        {"id": "a", "input": "again", "tags": ["z"]},  # a later line wins
        {"id": "d", "input": "q", "tags": []},
    ]
    run = _snapshot(tmp_path, rows)
    index = SnapshotIndex()
    RunCases(run, on_index=index.add).close()
    assert index.tags == case_tags(run)
    assert index.ids == case_ids(run)


def test_the_snapshot_index_defers_to_case_tags_on_bad_tags(tmp_path: Path) -> None:
    run = _snapshot(tmp_path, [{"id": "a", "input": "q", "tags": [1, {}]}])
    index = SnapshotIndex()
    RunCases(run, on_index=index.add).close()
    assert index.tags is None  # the live summary then reads the file (and fails on it)


def test_a_buffered_writer_writes_the_same_bytes(tmp_path: Path) -> None:
    header = RunHeader(kind="rescore")
    trials = [Trial(case_id=f"c{i}", output="é" * i) for i in range(50)]
    scores = {"s": Score(1.0, "ok")}
    paths = []
    for buffered in (False, True):
        out = tmp_path / f"out-{buffered}"
        with RunWriter.create(out, header, buffered=buffered) as w:
            for t in trials:
                w.append(t, scores)
            w.flush()
            assert (out / TRIALS).read_text(encoding="utf-8").count("\n") == 50
        paths.append(out / TRIALS)
    assert paths[0].read_bytes() == paths[1].read_bytes()
