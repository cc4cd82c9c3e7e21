"""``--executor ray``: a local Ray instance, and a real ``ray start --head`` + ``--ray-address``.

Slow to start (a Ray instance takes seconds), so few tests: each compares the trial set
with a one-process run. Skipped when Ray is not installed (it is in the ``dev`` extra).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

HERE = Path(__file__).resolve().parent
RELIABILITY = HERE.parent / "reliability"
N = 40


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(RELIABILITY), *sys.path])}
    # a throw-away cluster on 127.0.0.1 without Ray's token authentication (a real cluster
    # with it needs RAY_AUTH_TOKEN in the driver's environment: docs/scale.md)
    env.update({"RAY_USAGE_STATS_ENABLED": "0", "NO_COLOR": "1", "RAY_AUTH_MODE": "disabled"})
    env.update(extra)
    return env


def _cli(*args: Any, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env or _env(),
    )


def _cases(tmp: Path) -> Path:
    path = tmp / "cases.jsonl"
    rows = [{"id": f"r{i}", "input": f"item {i}", "expected": f"echo: item {i}"} for i in range(N)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _set(run: Path) -> dict[tuple[str, int], Any]:
    out: dict[tuple[str, int], Any] = {}
    for line in (run / "trials.jsonl").read_text().splitlines():
        t = json.loads(line)
        assert (t["case_id"], t["repeat"]) not in out
        out[(t["case_id"], t["repeat"])] = (t["output"], t["failure"], t["scores"])
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, int], Any]]:
    tmp = tmp_path_factory.mktemp("ref")
    cases = _cases(tmp)
    r = _cli("run", cases, "--agent", "_worker_agent:answer", "--out", tmp / "one", "--quiet")
    assert r.returncode == 0, r.stderr
    return cases, _set(tmp / "one")


def test_local_ray_instance_runs_the_trials(
    reference: tuple[Path, dict[tuple[str, int], Any]], tmp_path: Path
) -> None:
    """``--executor ray`` without an address: ``ray.init(num_cpus=2)``, two actors."""
    cases, expected = reference
    pids = tmp_path / "pids"
    pids.mkdir()
    r = _cli(
        "run", cases, "--agent", "_worker_agent:answer", "--out", tmp_path / "ray", "--quiet",
        "--executor", "ray", "--processes", "2",
        env=_env(WORKER_PIDS_DIR=str(pids)),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _set(tmp_path / "ray") == expected
    assert len(list(pids.iterdir())) == 2  # two actors, in their own processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ray_head(tmp_path: Path) -> Iterator[str]:
    """A real Ray cluster head on this machine (``ray start --head --block``, in a process
    group of its own), stopped after by ending that group: never ``ray stop``, which ends
    every Ray instance of the machine's user, a developer's own cluster or another test
    run's included."""
    ray = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")
    assert ray is not None
    port = _free_port()
    temp = Path(f"/tmp/rt{port}")  # Ray's socket paths must stay short
    env = _env(WORKER_PIDS_DIR=str(tmp_path / "pids"), WORKER_AGENT_SLEEP="0.05")
    (tmp_path / "pids").mkdir()
    start = [ray, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
    log = open(tmp_path / "ray-head.log", "wb")  # noqa: SIM115 - closed below
    head = subprocess.Popen(
        [*start, f"--temp-dir={temp}", "--block"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # `ray status` (a Python process of ~1 s CPU) is asked only once the head has
        # logged that it started, not once a second while it starts (~15 s on a busy machine)
        status = [ray, "status", f"--address=127.0.0.1:{port}"]
        end = time.monotonic() + 120
        while b"Ray runtime started" not in (tmp_path / "ray-head.log").read_bytes():
            assert head.poll() is None, (tmp_path / "ray-head.log").read_text()[-3000:]
            assert time.monotonic() < end, (
                "ray start --head did not log 'Ray runtime started' in 120 s: "
                + (tmp_path / "ray-head.log").read_text()[-3000:]
            )
            time.sleep(0.1)
        while subprocess.run(status, env=env, capture_output=True, timeout=60).returncode != 0:
            assert head.poll() is None, (tmp_path / "ray-head.log").read_text()[-3000:]
            assert time.monotonic() < end, "ray start --head did not come up in 120 s"
            time.sleep(1)
        yield f"127.0.0.1:{port}"
    finally:
        # ray start --block never ends on SIGTERM (a grace of 5 s, then 30 s, was always
        # waited out in full): the group is SIGKILLed, the rest found by temp dir
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait(30)
        _kill_by_temp_dir(temp)  # anything of this cluster that left the group
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _kill_by_temp_dir(temp: Path) -> None:
    """SIGKILL every process whose command line names ``temp`` (this cluster's only)."""
    mark = str(temp).encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if mark in cmdline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(proc.name), signal.SIGKILL)


def test_ray_address_run_survives_a_killed_actor(
    reference: tuple[Path, dict[tuple[str, int], Any]], tmp_path: Path, ray_head: str
) -> None:
    """``--ray-address`` of a ``ray start --head`` cluster; SIGKILL one actor mid-run: its
    batch runs again on a new actor, the trial set equals the one-process run's."""
    cases, expected = reference
    out, pids = tmp_path / "ray", tmp_path / "pids"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "run", str(cases), "--agent", "_worker_agent:answer",
         "--out", str(out), "--quiet", "--ray-address", ray_head, "--concurrency", "2"],
        env=_env(WORKER_PIDS_DIR=str(pids), WORKER_AGENT_SLEEP="0.05"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    end = time.monotonic() + 120
    while (
        not (out / "trials.jsonl").exists() or (out / "trials.jsonl").read_bytes().count(b"\n") < 8
    ):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end
        time.sleep(0.05)
    victim = int(next(iter(pids.iterdir())).name)
    os.kill(victim, signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert _set(out) == expected
    assert len(list(pids.iterdir())) >= 3  # the killed actor was replaced
