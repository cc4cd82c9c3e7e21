"""docs/scale.md, "Judge on workers": the judge's settings, the API key included, travel
to the worker processes pickled; "The key is never written anywhere". Real workers, a
real judge server on 127.0.0.1: every request carries the key, and no file of the new
run or of the judge cache, nor the command's output, holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _judge_fake import FakeJudge

from agenteval.cases.case import Case
from agenteval.rundir import RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

KEY = "sk-judge-workers-0123456789abcdef"


def _source_run(run: Path) -> Path:
    cases = [Case(id=f"k{i}", input=f"what is {i} + 1?", expected=str(i + 1)) for i in range(8)]
    with RunWriter.create(run, RunHeader(scorers=["exact_match"])) as w:
        write_cases(run, cases)
        for c in cases:
            w.append(Trial(case_id=c.id, output=c.expected), {"exact_match": Score(1.0, "ok")})
    return run


def _files(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file()]


def test_the_key_reaches_the_judge_from_the_workers_and_is_written_nowhere(
    tmp_path: Path,
) -> None:
    src = _source_run(tmp_path / "src")
    out, cache = tmp_path / "judged", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "JUDGE_KEY": KEY}
    with FakeJudge() as srv:
        cmd = [
            sys.executable, "-m", "agenteval", "judge", str(src), "--out", str(out),
            "--rubric", "correctness", "--judge-endpoint", srv.base_url,
            "--judge-model", "m", "--judge-api-key-env", "JUDGE_KEY",
            "--judge-cache", str(cache), "--processes", "2",
        ]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        assert srv.calls == 8
        assert {h.get("Authorization") for h in srv.headers} == {f"Bearer {KEY}"}
    files = _files(out, cache)
    assert len(files) >= 3 + 8  # run.json, cases.jsonl, trials.jsonl; a cache entry a call
    for p in files:
        assert KEY.encode() not in p.read_bytes(), p
        assert KEY[3:].encode() not in p.read_bytes(), p
    assert KEY not in r.stdout + r.stderr
