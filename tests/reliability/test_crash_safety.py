"""Crash safety: SIGKILL at seeded points during run, score, rescore and judge.

``run``: killed again and again at seeded moments (after a seeded number of trials has
been written, or early, before or during start-up), each time continued with ``--resume``;
after every kill ``trials.jsonl`` is read back with the product's reader and with plain
``json.loads`` per complete line; once, a torn last line is planted (what a kill mid-write
leaves) and the resume must drop it and say so. The final trial set equals an
uninterrupted run's, with no (case, repeat) lost or duplicated.

``score``/``rescore``/``judge`` (no ``--resume``): killed mid-way, the source is
byte-for-byte untouched, and running again into a fresh ``--out`` gives the same result as
a run that was never killed.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _obeying_judge import ObeyingJudge
from reliability_support import (
    ThreadedFake,
    agenteval_cmd,
    cli_env,
    read_trials,
    record_figures,
    run_cli,
    tree_bytes,
    write_jsonl,
)

from agenteval.rundir import iter_trials
from agenteval.testing.fake_openai import FakeConfig

pytestmark = pytest.mark.reliability

SEED = 424242
N_CASES = 100
REPEATS = 2
RUN_KILLS = 11
OTHER_KILLS = 3


def _cases(tmp: Path) -> Path:
    rows: list[dict[str, Any]] = []
    for i in range(N_CASES):
        text = f"item {i}"
        if i % 17 == 0:
            text += " [[fault:400]]"  # a permanent failure must survive the kills too
        rows.append({"id": f"k{i:03d}", "input": text, "expected": f"echo: item {i}"})
    return write_jsonl(tmp / "cases.jsonl", rows)


def _line_count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _lines_at_least(path: Path, n: int) -> Callable[[], bool]:
    return lambda: _line_count(path) >= n


def _kill_when(proc: subprocess.Popen[str], ready: Callable[[], bool], jitter: float) -> bool:
    """SIGKILL ``proc`` once ``ready()`` (then ``jitter`` s); False when it ended first."""
    deadline = time.monotonic() + 120
    while not ready():
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "the command made no progress"
        time.sleep(0.005)
    time.sleep(jitter)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    return True


def _observed(trials: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out = []
    for t in trials:
        cause = t["failure"]["cause"] if t["failure"] else None
        scores = {k: v["value"] for k, v in t["scores"].items()}
        out.append(
            (t["case_id"], t["repeat"], t["output"], cause, json.dumps(scores, sort_keys=True))
        )
    return sorted(out)


def _assert_readable(run_dir: Path) -> None:
    path = run_dir / "trials.jsonl"
    if not path.exists():
        return
    raw = path.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1] if b"\n" in raw else b""
    for line in complete.decode("utf-8").splitlines():
        json.loads(line)  # every complete line is whole
    if (run_dir / "run.json").exists():
        list(iter_trials(run_dir))  # the product's reader never breaks on a torn tail


def test_run_killed_and_resumed(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    dataset = _cases(tmp_path)
    with ThreadedFake(FakeConfig(latency_ms=8)) as srv:
        base: list[Any] = [
            "run",
            dataset,
            "--endpoint",
            srv.base_url,
            "--model",
            "m",
            "--repeats",
            str(REPEATS),
            "--concurrency",
            "4",
            "--retry-base",
            "0.001",
            "--quiet",
        ]
        ref = tmp_path / "ref"
        proc = run_cli(*base, "--out", ref)
        assert proc.returncode == 0, proc.stderr

        out = tmp_path / "killed"
        trials_path = out / "trials.jsonl"
        kills = 0
        points: list[str] = []
        torn_planted = False
        torn_reported = False
        for k in range(RUN_KILLS):
            resume = (out / "run.json").exists()
            args = [*base, "--out", out, *(["--resume"] if resume else [])]
            proc_k = subprocess.Popen(
                agenteval_cmd(*args),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=cli_env(),
            )
            if k < 2:  # early: during start-up, before or while the header is written
                delay = rng.uniform(0.05, 0.6)
                t0 = time.monotonic()
                end = t0 + delay
                killed = _kill_when(proc_k, lambda: time.monotonic() > end, 0)  # noqa: B023
                points.append(f"start+{delay:.2f}s")
            else:
                target = _line_count(trials_path) + rng.randint(3, 14)
                jitter = rng.uniform(0, 0.02)
                killed = _kill_when(proc_k, _lines_at_least(trials_path, target), jitter)
                points.append(f"after {target} lines+{jitter * 1000:.0f}ms")
            _, err = proc_k.communicate()
            assert "Traceback" not in err, err
            if "torn" in err:
                torn_reported = True
            kills += killed
            _assert_readable(out)
        assert trials_path.exists()
        with open(trials_path, "ab") as f:  # what a kill mid-write leaves behind
            f.write(b'{"case_id": "k0')
        torn_planted = True
        assert list(iter_trials(out))  # the product's reader skips it
        final = run_cli(*base, "--out", out, "--resume")
        assert final.returncode == 0, final.stderr
        torn_reported = torn_reported or "torn" in final.stderr
    assert torn_planted and torn_reported, "a torn last line must be dropped and said so"
    got = read_trials(out)
    keys = [(t["case_id"], t["repeat"]) for t in got]
    assert len(keys) == len(set(keys)) == N_CASES * REPEATS
    assert _observed(got) == _observed(read_trials(ref))
    assert kills >= RUN_KILLS - 2, f"only {kills} kills landed: {points}"
    record_figures(
        "crash_run",
        {"kill_points": len(points), "kills_landed": kills, "trials": len(got), "points": points},
    )


def _kill_chain(
    name: str, cmd: list[Any], tmp: Path, rng: random.Random, before: dict[str, bytes]
) -> tuple[int, list[dict[str, Any]]]:
    """Kill ``cmd`` OTHER_KILLS times at seeded points, then run it to the end."""
    landed = 0
    for k in range(OTHER_KILLS):
        out = tmp / f"{name}_killed_{k}"
        proc = subprocess.Popen(
            agenteval_cmd(*cmd, "--out", out, "--quiet"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        target = rng.randint(1, N_CASES * REPEATS - 20)
        landed += _kill_when(proc, _lines_at_least(out / "trials.jsonl", target), 0)
        proc.communicate()
        _assert_readable(out)
        now = tree_bytes(tmp / "source")
        assert now == before, f"{name} killed: the source run changed"
    again = tmp / f"{name}_again"
    p = run_cli(*cmd, "--out", again, "--quiet")
    assert p.returncode == 0, p.stderr
    return landed, read_trials(again)


def test_score_rescore_judge_killed(tmp_path: Path) -> None:
    dataset = _cases(tmp_path)
    src = tmp_path / "source"
    with ThreadedFake() as srv:
        proc = run_cli(
            "run",
            dataset,
            "--endpoint",
            srv.base_url,
            "--model",
            "m",
            "--repeats",
            str(REPEATS),
            "--concurrency",
            "8",
            "--quiet",
            "--out",
            src,
        )
        assert proc.returncode == 0, proc.stderr
    trial_file = src / "trials.jsonl"
    before = tree_bytes(src)
    expected = _observed(read_trials(src))

    with ObeyingJudge(signatures=["never-present-signature"]) as judge:
        commands: dict[str, list[Any]] = {
            "score": ["score", dataset, trial_file],
            "rescore": ["rescore", src],
            "judge": [
                "judge",
                src,
                "--rubric",
                "correctness",
                "--judge-endpoint",
                judge.base_url,
                "--judge-model",
                "j",
                "--no-judge-cache",
            ],
        }
        with ThreadPoolExecutor(3) as pool:
            futures = {
                name: pool.submit(_kill_chain, name, cmd, tmp_path, random.Random(SEED + i), before)
                for i, (name, cmd) in enumerate(commands.items())
            }
            results = {name: f.result() for name, f in futures.items()}
    for name, (_, trials) in results.items():
        if name == "judge":
            assert all(t["scores"].pop("judge_correctness")["value"] in (0.0, None) for t in trials)
        assert _observed(trials) == expected, name
    landed = {name: r[0] for name, r in results.items()}
    assert all(v >= 2 for v in landed.values()), landed
    record_figures(
        "crash_score_rescore_judge", {"kill_points": OTHER_KILLS * 3, "kills_landed": landed}
    )


def test_torn_line_reported_when_resume_starts(tmp_path: Path) -> None:
    dataset = _cases(tmp_path)
    with ThreadedFake(FakeConfig(latency_ms=20)) as srv:
        base: list[Any] = [
            "run",
            dataset,
            "--endpoint",
            srv.base_url,
            "--model",
            "m",
            "--concurrency",
            "2",
            "--quiet",
            "--out",
            tmp_path / "r",
        ]
        assert run_cli(*base).returncode == 0
        path = tmp_path / "r" / "trials.jsonl"
        keep = path.read_bytes().splitlines(keepends=True)[:2]
        path.write_bytes(b"".join(keep) + b'{"case_id": "k0')  # torn tail
        proc = subprocess.Popen(  # a resume must keep --limit: the run is made again whole
            agenteval_cmd(*base, "--resume"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        assert _kill_when(proc, lambda: _line_count(path) >= 8, 0.0)
        _, err = proc.communicate()
    assert "torn" in err
