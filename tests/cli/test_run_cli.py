"""``agenteval run`` end to end against the fake OpenAI server in its own process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval.rundir import iter_trials, read_header
from fake_server_util import fake_server_process

KEY = "sk-test-5f1c9a7e2b4d4c0e9a1b"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with fake_server_process(20) as url:
        yield url


def _cases(path: Path, n: int, marker: str = "") -> Path:
    with open(path, "w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "id": f"c{i}",
                        "input": f"question {i} {marker}",
                        "expected": f"echo: question {i}",
                    }
                )
                + "\n"
            )
    return path


def _run(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", "run", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


def test_faults_give_the_right_retries_and_causes_and_no_secret_is_written(
    tmp_path: Path, server: str
) -> None:
    ds = tmp_path / "cases.jsonl"
    rows = [
        ("ok", ""),
        ("flaky429", "[[fault:429:2]]"),
        ("flaky500", "[[fault:500:1]]"),
        ("reset", "[[fault:reset_before_headers:1]]"),
        ("dead503", "[[fault:503]]"),
        ("notfound", "[[fault:404]]"),
        ("garbage", "[[fault:not_json]]"),
        ("hang", "[[fault:hang]]"),
        ("nochoices", "[[fault:no_choices]]"),
    ]
    ds.write_text("".join(json.dumps({"id": i, "input": f"hi {m}"}) + "\n" for i, m in rows))
    out = tmp_path / "run"
    p = _run(
        ds,
        "--endpoint",
        server,
        "--model",
        "gpt-4o-mini",
        "--out",
        out,
        "--timeout",
        "2",
        "--max-retries",
        "2",
        "--retry-base",
        "0.001",
        "--concurrency",
        "4",
        env={"OPENAI_API_KEY": KEY},
    )
    assert p.returncode == 0, p.stderr
    t = {r.case_id: r for r in iter_trials(out)}
    assert set(t) == {i for i, _ in rows}
    assert t["ok"].failure is None and t["ok"].usage[0].model == "gpt-4o-mini"
    assert [r.reason for r in t["flaky429"].retries] == ["rate_limit", "rate_limit"]
    assert t["flaky429"].failure is None
    assert [r.reason for r in t["flaky500"].retries] == ["server_error"]
    assert [r.reason for r in t["reset"].retries] == ["connection"]
    assert t["dead503"].failure.cause == "server_error" and len(t["dead503"].retries) == 2
    assert t["notfound"].failure.cause == "http_error" and not t["notfound"].retries
    assert t["garbage"].failure.cause == "malformed_response"
    assert t["nochoices"].failure.cause == "malformed_response"
    assert t["hang"].failure.cause == "timeout"
    assert t["hang"].latency.total_s >= 2
    summary = read_header(out).summary
    assert summary is not None and summary["failed"] == 5
    for f in out.rglob("*"):
        if f.is_file():
            text = f.read_text(errors="replace")
            assert KEY not in text and "Bearer" not in text, f
    assert KEY not in p.stdout + p.stderr


def test_sigkill_mid_run_then_resume_gives_the_same_trial_set(tmp_path: Path, server: str) -> None:
    ds = _cases(tmp_path / "cases.jsonl", 300)
    clean = tmp_path / "clean"
    assert (
        _run(
            ds,
            "--endpoint",
            server,
            "--model",
            "m",
            "--out",
            clean,
            "--concurrency",
            "8",
            "--quiet",
            "--repeats",
            "2",
        ).returncode
        == 0
    )
    out = tmp_path / "killed"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenteval",
            "run",
            str(ds),
            "--endpoint",
            server,
            "--model",
            "m",
            "--out",
            str(out),
            "--concurrency",
            "8",
            "--quiet",
            "--repeats",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    trials = out / "trials.jsonl"
    while time.monotonic() < deadline:
        if trials.exists() and trials.stat().st_size > 20_000:
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    partial = sum(1 for _ in iter_trials(out))
    assert 0 < partial < 600
    r = _run(
        ds,
        "--endpoint",
        server,
        "--model",
        "m",
        "--out",
        out,
        "--concurrency",
        "8",
        "--quiet",
        "--repeats",
        "2",
        "--resume",
    )
    assert r.returncode == 0, r.stderr
    assert "already recorded" in r.stderr
    keys = [t.key for t in iter_trials(out)]
    assert len(keys) == len(set(keys)) == 600
    assert sorted(keys) == sorted(t.key for t in iter_trials(clean))
    assert read_header(out).summary["trials"] == 600


def test_an_endpoint_run_imports_only_what_it_uses(tmp_path: Path, server: str) -> None:
    data = _cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    args = ["--endpoint", server, "--model", "m", "--out", str(out), "--quiet"]
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agenteval", "run", str(data), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if "|" in line}
    assert "agenteval.summary.live" in imported  # the check sees agenteval's own imports
    unused = {
        "agenteval.agents.tool_loop",  # --agent tool-loop only
        "agenteval.agents.mcp_tools",
        "mcp",
        "agenteval.cli._run_benchmarks",  # --benchmark only
        "agenteval.benchmarks._suites",
        "agenteval.benchmarks.declarative",
        "agenteval.report.markdown",  # other outputs
        "agenteval.report.junit",
        "agenteval.report.html",
        "jinja2",
        "agenteval.judge",  # no judge asked for
        "yaml",  # no price file (start-up, docs/performance.md)
        "agenteval.gate",
        "agenteval.executors.pool",  # no --processes
        "opentelemetry",
        "jsonschema",
    }
    assert imported & unused == set()
    assert len(list(iter_trials(out))) == 3
