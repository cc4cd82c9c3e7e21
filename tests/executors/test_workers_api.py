"""``evaluate(processes=...)`` and ``rescore --processes``: the same results as one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agenteval import evaluate
from agenteval.errors import EXIT_INPUT, InputError
from agenteval.executors import Executor, resolve

HERE = Path(__file__).resolve().parent
RELIABILITY = HERE.parent / "reliability"


def _cases(tmp: Path, n: int = 30) -> Path:
    path = tmp / "cases.jsonl"
    rows = [{"id": f"c{i}", "input": f"item {i}", "expected": f"echo: item {i}"} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _set(run: Path) -> dict[tuple[str, int], Any]:
    out = {}
    for line in (run / "trials.jsonl").read_text().splitlines():
        t = json.loads(line)
        out[(t["case_id"], t["repeat"])] = (t["output"], t["scores"])
    return out


@pytest.fixture(autouse=True)
def _importable_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(RELIABILITY))
    monkeypatch.setenv("PYTHONPATH", f"{RELIABILITY}:{':'.join(sys.path)}")


def test_evaluate_with_processes_gives_the_one_process_trials(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    one = evaluate(cases, "_worker_agent:answer", out=tmp_path / "one", repeats=2)
    two = evaluate(cases, "_worker_agent:answer", out=tmp_path / "two", repeats=2, processes=2)
    assert _set(two.run_dir) == _set(one.run_dir)
    assert two.summary["trials"] == 60 and two.summary == {**two.summary, **{"failed": 0}}


def test_evaluate_refuses_an_unpicklable_agent_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"the agent '.*<lambda>' cannot be sent to worker"):
        evaluate(_cases(tmp_path), lambda case: "x", out=tmp_path / "r", processes=2)
    assert not (tmp_path / "r").exists()


def test_evaluate_refuses_an_unpicklable_scorer(tmp_path: Path) -> None:
    def local_scorer(case: Any, trial: Any) -> bool:
        return True

    with pytest.raises(InputError, match="scorer 'local_scorer' cannot be sent"):
        evaluate(_cases(tmp_path), "_worker_agent:answer", scorers=[local_scorer], processes=2)


def test_resolve() -> None:
    assert resolve(None, None) is None and resolve(1, None) is None
    assert resolve(3, None) == Executor("process", 3)
    assert resolve(None, "ray") == Executor("ray", None)
    assert resolve(4, Executor("ray", address="auto")) == Executor("ray", 4, "auto")
    with pytest.raises(InputError):
        resolve(2, "dask")


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(RELIABILITY), *sys.path])},
    )


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("src")
    r = _cli(
        "run", _cases(tmp, 600), "--agent", "_worker_agent:answer", "--out", tmp / "run", "--quiet"
    )
    assert r.returncode == 0, r.stderr
    return tmp / "run"


def test_rescore_with_processes_writes_the_same_lines(scored_run: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert _cli("rescore", scored_run, "--out", one, "--quiet").returncode == 0
    r = _cli("rescore", scored_run, "--out", two, "--quiet", "--processes", "2")
    assert r.returncode == 0, r.stderr
    assert (two / "trials.jsonl").read_bytes() == (one / "trials.jsonl").read_bytes()
    summary = json.loads((two / "run.json").read_text())["summary"]
    assert (
        summary["trials"] == 600
        and summary["scorers"] == json.loads((one / "run.json").read_text())["summary"]["scorers"]
    )


def test_rescore_with_processes_refuses_a_duplicate_and_skips_a_torn_line(
    scored_run: Path, tmp_path: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("run.json", "cases.jsonl"):
        (src / name).write_bytes((scored_run / name).read_bytes())
    lines = (scored_run / "trials.jsonl").read_bytes().splitlines(keepends=True)
    (src / "trials.jsonl").write_bytes(b"".join(lines) + lines[0][:40])  # torn last line
    r = _cli("rescore", src, "--out", tmp_path / "ok", "--quiet", "--processes", "2")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ok" / "trials.jsonl").read_bytes().count(b"\n") == 600
    (src / "trials.jsonl").write_bytes(b"".join(lines[:400]) + lines[3] + b"".join(lines[400:]))
    r = _cli("rescore", src, "--out", tmp_path / "dup", "--quiet", "--processes", "2")
    assert r.returncode == EXIT_INPUT
    case = json.loads(lines[3])["case_id"]
    assert r.stderr.strip() == (
        f"agenteval: error: {src / 'trials.jsonl'}:401: a second trial for case '{case}'"
        " repeat 0 (first at line 4)"
    )
    one = _cli("rescore", src, "--out", tmp_path / "dup1", "--quiet")
    assert (one.returncode, one.stderr) == (r.returncode, r.stderr)  # as in one process
    assert not (tmp_path / "dup").exists()


def test_a_one_process_run_resumes_with_processes(scored_run: Path, tmp_path: Path) -> None:
    """``--processes`` is not part of the fingerprint: a run killed in one process (here:
    its file cut after 100 whole lines, what a SIGKILL leaves) resumes on workers."""
    run = tmp_path / "run"
    run.mkdir()
    for name in ("run.json", "cases.jsonl"):
        (run / name).write_bytes((scored_run / name).read_bytes())
    lines = (scored_run / "trials.jsonl").read_bytes().splitlines(keepends=True)
    (run / "trials.jsonl").write_bytes(b"".join(lines[:100]) + lines[100][:30])
    cases = scored_run.parent / "cases.jsonl"
    r = _cli(
        "run", cases, "--agent", "_worker_agent:answer", "--out", run, "--resume", "--quiet",
        "--processes", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _set(run) == _set(scored_run)
    assert json.loads((run / "run.json").read_text())["summary"]["trials"] == 600


def test_the_judge_runs_in_the_workers(tmp_path: Path) -> None:
    """``run --processes 2`` with an LLM judge: every trial judged once, in the workers,
    with the same scores as in one process (a real fake judge server on 127.0.0.1)."""
    sys.path.insert(0, str(HERE.parent / "judge"))
    try:
        from _judge_fake import FakeJudge
    finally:
        sys.path.pop(0)
    cases = _cases(tmp_path, 12)
    with FakeJudge() as srv:
        judge = ["--rubric", "correctness", "--judge-endpoint", srv.base_url, "--judge-model", "jm"]
        one = _cli(
            "run", cases, "--agent", "_worker_agent:answer", "--out", tmp_path / "one", "--quiet",
            *judge, "--judge-cache", tmp_path / "cache1",
        )  # fmt: skip
        assert one.returncode == 0, one.stderr
        calls = len(srv.requests)
        two = _cli(
            "run", cases, "--agent", "_worker_agent:answer", "--out", tmp_path / "two", "--quiet",
            "--processes", "2", *judge, "--judge-cache", tmp_path / "cache2",
        )  # fmt: skip
        assert two.returncode == 0, two.stderr
        assert len(srv.requests) - calls == calls == 12
    got = _set(tmp_path / "two")
    assert got == _set(tmp_path / "one")
    assert all(scores["judge_correctness"]["value"] == 1.0 for _, scores in got.values())
