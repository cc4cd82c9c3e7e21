"""score, rescore, judge and import-traces when the disk is full: one line, exit 5.

Real faults, no mocks: a file-size limit on the child process (``RLIMIT_FSIZE``: the
kernel fails writes past it with ``EFBIG``, as a full disk fails them with ``ENOSPC``).
Bug: each of these gave a traceback and exit 1 (only ``run`` handled a write error),
though docs/cli.md promises exit 5 for them.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXIT_IO = 5
LIMIT = 1 << 20
BIG = "\x01" * 300_000  # 300 kB in memory and in the import spool, 1.8 MB as JSON text


def _limited(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=preexec,
        timeout=120,
    )


def _one_line(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == EXIT_IO, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agenteval: error: cannot write"), r.stderr
    return lines[0]


def _inputs(tmp: Path) -> tuple[Path, Path]:
    cases, trials = tmp / "cases.jsonl", tmp / "trials.jsonl"
    cases.write_text(json.dumps({"id": "c1", "input": "hi"}) + "\n")
    trials.write_text(json.dumps({"case_id": "c1", "output": BIG}) + "\n")
    return cases, trials


def test_score_disk_full_exits_5_with_one_line(tmp_path: Path) -> None:
    cases, trials = _inputs(tmp_path)
    out = tmp_path / "out"
    line = _one_line(_limited("score", cases, trials, "--out", out, "--quiet"))
    assert str(out / "trials.jsonl") in line and "File too large" in line
    assert "--resume" not in line  # score has no --resume


def test_rescore_disk_full_exits_5_and_removes_the_new_run(tmp_path: Path, cli: Any) -> None:
    cases, trials = _inputs(tmp_path)
    src = tmp_path / "src"
    assert cli("score", cases, trials, "--out", src, "--quiet").returncode == 0
    out = tmp_path / "out"
    line = _one_line(_limited("rescore", src, "--out", out, "--quiet"))
    assert str(out / "trials.jsonl") in line and "removed" in line
    assert not out.exists()


def test_judge_disk_full_exits_5_and_removes_the_new_run(tmp_path: Path, cli: Any) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
    from _judge_fake import FakeJudge, Reply

    cases, trials = _inputs(tmp_path)
    src = tmp_path / "src"
    assert cli("score", cases, trials, "--out", src, "--quiet").returncode == 0
    rubric = tmp_path / "r.txt"
    rubric.write_text("Is it good?\n{input}\n{output}\n")
    out = tmp_path / "out"
    with FakeJudge(default=Reply("fine\nGRADE: C")) as srv:
        r = _limited(
            "judge", src, "--out", out, "--rubric", f"{rubric}:binary", "--quiet",
            "--judge-endpoint", srv.base_url, "--judge-model", "m", "--no-judge-cache",
        )  # fmt: skip
    line = _one_line(r)
    assert "removed" in line
    assert not out.exists()


def _trace(tmp: Path, output: str) -> Path:
    span = {
        "traceId": "1" * 32,
        "spanId": "a" * 16,
        "name": "invoke_agent a",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
            {"key": k, "value": {"stringValue": v}}
            for k, v in {
                "gen_ai.operation.name": "invoke_agent",
                "input.value": "hi",
                "output.value": output,
            }.items()
        ],
    }
    f = tmp / "t.json"
    f.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return f


def test_import_traces_disk_full_in_the_run_exits_5_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    line = _one_line(_limited("import-traces", _trace(tmp_path, BIG), "--out", out, "--quiet"))
    assert str(out / "trials.jsonl") in line and "--resume" not in line


@pytest.fixture(autouse=True)
def _linux_only() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_FSIZE faults are tested on Linux")
