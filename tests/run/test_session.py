"""Session: the small-dataset shortcut and the GC freeze leave every run the same."""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import agenteval.run.session
from agenteval import Case, evaluate
from agenteval._util.gc import frozen_heap

CASES = [
    {"id": f"c{i}", "input": f"q {i}", "expected": f"a {i}", "tags": ["t"], "extra": i}
    for i in range(40)
]


def answer(case: Case) -> str:
    return f"a {case.metadata['extra']}" if case.metadata["extra"] % 3 else "wrong"


def _stable(run_dir: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    for r in rows:
        r.pop("started_at")
        r.pop("latency")
    return sorted(rows, key=lambda r: (r["case_id"], r["repeat"]))


def test_kept_cases_and_cases_read_back_give_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_back: list[bytes] = []

    class Spy(Case):  # counts the cases validated again from the snapshot
        @classmethod
        def model_validate_json(cls, data: Any, **kw: Any) -> Case:  # type: ignore[override]
            read_back.append(data)
            return Case.model_validate_json(data, **kw)

    monkeypatch.setattr(agenteval.run.session, "Case", Spy)
    kept = evaluate(CASES, answer, out=tmp_path / "kept", repeats=2, limit=30)
    assert read_back == []  # a small dataset: the validated cases were kept
    monkeypatch.setattr(agenteval.run.session, "KEEP_CASES_BYTES", 0)  # every case read back
    reread = evaluate(CASES, answer, out=tmp_path / "reread", repeats=2, limit=30)
    assert len(read_back) == 30
    assert _stable(kept.run_dir) == _stable(reread.run_dir)
    assert len(_stable(kept.run_dir)) == 60  # limit applies to both paths
    snapshot = (kept.run_dir / "cases.jsonl").read_bytes()
    assert snapshot == (reread.run_dir / "cases.jsonl").read_bytes()
    assert kept.summary["scorers"] == reread.summary["scorers"]


def test_the_snapshot_is_the_canonical_text_the_dataset_hash_covers(tmp_path: Path) -> None:
    run = evaluate(CASES, answer, out=tmp_path / "h")
    data = (run.run_dir / "cases.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == run.header.dataset.sha256
    first = json.loads(data.splitlines()[0])
    assert list(first) == sorted(first)


def test_a_run_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    assert gc.get_freeze_count() == 0
    evaluate(CASES[:5], answer, out=tmp_path / "a")
    assert gc.get_freeze_count() == 0


def test_frozen_heap_leaves_a_callers_freeze_alone() -> None:
    gc.freeze()
    try:
        # frozen objects another thread frees (xdist's own) leave the count: allow a few;
        # unfreezing the caller's heap would drop it to about nothing
        before = gc.get_freeze_count()
        with frozen_heap():
            assert before - 1000 < gc.get_freeze_count() <= before
        assert before - 1000 < gc.get_freeze_count() <= before
    finally:
        gc.unfreeze()


def test_frozen_heap_freezes_only_while_inside() -> None:
    with frozen_heap():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
