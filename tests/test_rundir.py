from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.errors import InputError
from agenteval.rundir import (
    FORMAT_VERSION,
    RunHeader,
    RunWriter,
    iter_trials,
    read_header,
)
from agenteval.score import Score
from agenteval.trial import Failure, ToolCall, Trial


def _write(run: Path, n: int) -> None:
    with RunWriter.create(run, RunHeader(scorers=["x"])) as w:
        for i in range(n):
            t = Trial(
                case_id=f"c{i}",
                output=str(i),
                tool_calls=[ToolCall(name="search", arguments='{"q": 1}', result="r")],
            )
            w.append(t, {"x": Score(1.0, "ok")})
        w.finish({"trials": n})


def test_round_trip(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write(run, 3)
    h = read_header(run)
    assert h.format_version == FORMAT_VERSION and h.summary == {"trials": 3}
    recs = list(iter_trials(run))
    assert [r.case_id for r in recs] == ["c0", "c1", "c2"]
    assert recs[0].tool_calls[0].arguments == {"q": 1}
    assert recs[0].scores["x"] == Score(1.0, "ok")
    line = json.loads((run / "trials.jsonl").read_text().splitlines()[0])
    assert line["scores"]["x"] == {
        "status": "passed",
        "value": 1.0,
        "reason": "ok",
        "passed": True,
        "threshold": 1.0,
    }


def test_create_refuses_to_overwrite_a_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write(run, 1)
    with pytest.raises(InputError, match="already holds a run"):
        RunWriter.create(run, RunHeader())


def test_torn_last_line_is_skipped_by_readers_and_cut_on_resume(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write(run, 2)
    with open(run / "trials.jsonl", "a") as f:
        f.write('{"case_id": "c2", "outp')
    assert [r.case_id for r in iter_trials(run)] == ["c0", "c1"]
    w, done, notes = RunWriter.open_resume(run)
    w.close()
    assert done == {("c0", 0), ("c1", 0)}
    assert any("torn" in n for n in notes)
    assert (run / "trials.jsonl").read_text().endswith("}\n")


def test_resume_drops_cancelled_trials_so_they_run_again(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunWriter.create(run, RunHeader()) as w:
        w.append(Trial(case_id="a", output="x"), {})
        w.append(Trial(case_id="b", failure=Failure(cause="cancelled", message="^C")), {})
        w.append(Trial(case_id="c", output="y"), {})
    w2, done, notes = RunWriter.open_resume(run)
    w2.append(Trial(case_id="b", output="z"), {})
    w2.close()
    assert done == {("a", 0), ("c", 0)}
    assert any("cancelled" in n for n in notes)
    assert sorted(r.case_id for r in iter_trials(run)) == ["a", "b", "c"]


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write(run, 1)
    data = json.loads((run / "run.json").read_text())
    data["format_version"] = FORMAT_VERSION + 1
    (run / "run.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="newer"):
        read_header(run)


def test_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a run directory"):
        read_header(tmp_path)
    with pytest.raises(InputError, match="not a run directory"):
        read_header(tmp_path / "missing")


def test_format_1_headers_migrate_to_specs_idempotently() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from agenteval.migrate import migrate_header
    from agenteval.rundir import RunHeader

    rubric = {"name": "tone", "scale": "likert", "threshold": 0.6, "source": "/r/tone.txt"}
    judge = {"judge": {"model": "m", "rubrics": [rubric]}}
    h = RunHeader.model_validate(
        {"format_version": 1, "agent": judge, "scorers": ["pii_leakage", "judge_tone", "mine"]}
    )
    pii, tone, mine = h.scorers
    assert (pii.ref, pii.safety, pii.settings) == ("builtin:pii_leakage", True, {})
    assert (tone.ref, tone.kind, tone.threshold) == ("judge:/r/tone.txt", "graded", 0.6)
    assert tone.settings == {"model": "m", "scale": "likert"}
    assert (mine.ref, mine.kind, mine.threshold, mine.safety) == (None, "pass/fail", 1.0, False)

    @given(st.lists(st.one_of(st.sampled_from(["exact_match", "judge_tone"]), st.text())))
    def idempotent(names: list[str]) -> None:
        once = migrate_header({"agent": judge, "scorers": names})
        assert migrate_header(once) == once
        back = RunHeader.model_validate(once).model_dump(mode="json")
        assert migrate_header(back)["scorers"] == back["scorers"]

    idempotent()
