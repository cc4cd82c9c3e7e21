from __future__ import annotations

import json
import re
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
from agenteval.scoring.score import Score
from agenteval.trials.trial import Failure, ToolCall, Trial


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
    # the way out it names exists for the command that asked, by field (the CLI: by flag)
    for command, how, flagged in (
        ("agenteval run", "use resume to continue it or choose another out", "use --resume"),
        ("evaluate()", "pass resume=True to continue it", "pass resume=True"),
        (
            "agenteval import-traces",
            "choose another out (a run is never overwritten)",
            "choose another --out (a run is never overwritten)",
        ),
    ):
        with pytest.raises(InputError, match=re.escape(how)) as e:
            RunWriter.create(run, RunHeader(), command=command)
        renamed = e.value.renamed({"resume": "--resume", "out": "--out"}) or e.value
        assert flagged in str(renamed)


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


def test_one_writer_at_a_time_and_the_lock_names_its_holder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    w = RunWriter.create(run, RunHeader(), command="agenteval run")
    with pytest.raises(InputError, match=r"another agenteval process is writing this run \(pid"):
        RunWriter.open_resume(run)
    with pytest.raises(InputError, match="'agenteval run', started 20"):
        RunWriter.open_resume(run)
    w.close()
    w2, _, _ = RunWriter.open_resume(run, command="x --resume")
    assert json.loads((run / "run.lock").read_text())["command"] == "x --resume"
    w2.close()


def test_a_refused_resume_check_writes_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write(run, 1)
    (run / "run.lock").unlink()
    before = {p.name: p.read_bytes() for p in run.iterdir()}

    def refuse(header: RunHeader) -> None:
        raise InputError("not the same run")

    with pytest.raises(InputError, match="not the same run"):
        RunWriter.open_resume(run, check=refuse)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def _race_create(run: Path, n: int) -> list[object]:
    """``n`` threads call RunWriter.create(run) at once; what each got."""
    import threading

    barrier = threading.Barrier(n)
    results: list[object] = []

    def create() -> None:
        barrier.wait()
        try:
            results.append(RunWriter.create(run, RunHeader()))
        except InputError as e:
            results.append(e)

    threads = [threading.Thread(target=create) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_threads_creating_one_new_run_dir_give_one_writer(tmp_path: Path) -> None:
    """mkdir is exclusive and the contents are checked again under the lock."""
    for attempt in range(5):
        results = _race_create(tmp_path / f"a{attempt}" / "run", 6)
        writers = [r for r in results if isinstance(r, RunWriter)]
        assert len(writers) == 1, results
        assert all(
            "another agenteval process" in str(r) or "already holds a run" in str(r)
            for r in results
            if isinstance(r, InputError)
        )
        writers[0].close()


def test_non_empty_folder_without_a_run_is_refused_untouched(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "trials.jsonl").write_text("mine\n")
    with pytest.raises(InputError, match=r"is not empty and holds no agenteval run \(trials"):
        RunWriter.create(d, RunHeader())
    assert [p.name for p in d.iterdir()] == ["trials.jsonl"]
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(InputError, match="exists and is not a directory"):
        RunWriter.create(f, RunHeader())


def test_discard_removes_only_an_empty_fresh_run(tmp_path: Path) -> None:
    new = tmp_path / "new" / "run"
    RunWriter.create(new, RunHeader()).discard()
    assert not new.exists() and (tmp_path / "new").exists()  # only what it created
    empty = tmp_path / "empty"
    empty.mkdir()
    RunWriter.create(empty, RunHeader()).discard()
    assert empty.exists() and list(empty.iterdir()) == []
    kept = tmp_path / "kept"
    w = RunWriter.create(kept, RunHeader())
    w.append(Trial(case_id="a", output="x"), {})
    assert w.discard() is False and (kept / "run.json").exists()
    w2, _, _ = RunWriter.open_resume(kept)
    assert w2.discard() is False and len(list(iter_trials(kept))) == 1


def test_format_1_headers_migrate_to_specs_idempotently() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from agenteval.rundir import RunHeader
    from agenteval.rundir.migrate import migrate_header

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

    @given(
        st.lists(st.one_of(st.sampled_from(["exact_match", "judge_tone"]), st.text()), unique=True)
    )
    def idempotent(names: list[str]) -> None:
        once = migrate_header({"agent": judge, "scorers": names})
        assert migrate_header(once) == once
        back = RunHeader.model_validate(once).model_dump(mode="json")
        assert migrate_header(back)["scorers"] == back["scorers"]

    idempotent()
