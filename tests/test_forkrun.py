"""tests/forkrun.py: a command forked from the server is the command started for real.

Same bytes on stdout and stderr, same exit code, the same files written, signals reach the
command, a killed client takes the command with it, and what cannot be the same (a
``-X`` option, another PYTHONPATH that shadows a preloaded module, ``Popen``) is started
for real.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forkrun

if sys.platform != "linux":  # pragma: no cover
    pytest.skip("the fork server uses pidfd_open (Linux)", allow_module_level=True)

REAL = subprocess.run.__wrapped__ if hasattr(subprocess.run, "__wrapped__") else subprocess.run


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    srv = forkrun.ForkServer(tmp_path_factory.mktemp("fork"))
    assert srv.start()
    yield srv
    srv.stop()


_RUN_ID = re.compile(r"run [0-9a-f]{12}")


def _both(server, args, cwd):  # type: ignore[no-untyped-def]
    """Run ``agenteval ARGS`` for real and forked ("{}" in an argument: real / fork)."""
    out = {}
    for how in ("real", "fork"):
        argv = [sys.executable, "-m", "agenteval", *(a.replace("{}", how) for a in args)]
        if how == "fork":
            argv = server.forked_argv(argv, {"cwd": cwd})
            assert argv is not None, "this command should be routed to the server"
        done = REAL(argv, capture_output=True, text=True, cwd=cwd, timeout=120)
        stdout = _RUN_ID.sub("run <id>", done.stdout.replace(how, "{}"))
        out[how] = (done.returncode, stdout, done.stderr.replace(how, "{}"))
    return out["real"], out["fork"]


CASES = """\
{"id": "c1", "input": "What is 2+2?", "expected": "4"}
{"id": "c2", "input": "Capital of France?", "expected": "Paris"}
"""
TRIALS = """\
{"case_id": "c1", "output": "4"}
{"case_id": "c2", "output": "Lyon", "latency": 1.5}
"""


def test_the_same_bytes_and_exit_code_on_success_and_on_bad_input(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "cases.jsonl").write_text(CASES)
    (tmp_path / "trials.jsonl").write_text(TRIALS)
    (tmp_path / "bad.jsonl").write_text('{"id": "c1", "input": 3}\n{not json\n')
    for args in (
        ["--help"],
        ["--version"],
        ["schema", "case"],
        ["no-such-command"],
        ["score", "cases.jsonl", "trials.jsonl", "--out", "run-{}"],
        ["score", "bad.jsonl", "trials.jsonl", "--out", "bad-{}"],
        ["report", "missing-run"],
    ):
        real, fork = _both(server, args, tmp_path)
        assert fork == real, args
    assert (tmp_path / "run-fork" / "trials.jsonl").exists()
    assert not (tmp_path / "bad-fork").exists()
    real, fork = _both(server, ["report", "run-{}"], tmp_path)
    assert real[0] == fork[0] == 0
    assert real == fork


def _agent(tmp_path: Path, module: str, source: str) -> str:
    """Write agent ``module`` and a one-case dataset; the PYTHONPATH that finds the agent."""
    agent_dir = tmp_path / "agents"
    agent_dir.mkdir()
    (agent_dir / f"{module}.py").write_text(source)
    (tmp_path / "cases.jsonl").write_text('{"id": "c1", "input": "hi"}\n')
    return os.pathsep.join(filter(None, [str(agent_dir), os.environ.get("PYTHONPATH")]))


def test_environment_cwd_umask_and_pythonpath_are_the_clients(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pythonpath = _agent(
        tmp_path,
        "env_agent",
        "import os\n"
        "def answer(case):\n"
        "    return os.environ['FORKRUN_PROBE'] + ' ' + os.getcwd() + ' ' + oct(os.umask(0o22))\n",
    )
    env = {**os.environ, "FORKRUN_PROBE": "probe-42", "PYTHONPATH": pythonpath}
    argv = [sys.executable, "-m", "agenteval", "run", "cases.jsonl", "--agent",
            "env_agent:answer", "--out", "r", "--quiet"]  # fmt: skip
    forked = server.forked_argv(argv, {"env": env, "cwd": tmp_path})
    assert forked is not None
    before = os.umask(0o027)  # not the server's (0o22): the client's must reach the command
    try:
        done = REAL(forked, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    finally:
        os.umask(before)
    assert done.returncode == 0, done.stderr
    line = (tmp_path / "r" / "trials.jsonl").read_text()
    assert f"probe-42 {tmp_path} 0o27" in line


def test_signals_reach_the_command_and_a_killed_client_ends_it(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pythonpath = _agent(
        tmp_path,
        "slow_agent",
        "import asyncio, os, pathlib\n"
        "async def answer(case):\n"
        "    pathlib.Path(os.environ['PIDFILE']).write_text(str(os.getpid()))\n"
        "    await asyncio.sleep(60)\n"
        "    return 'late'\n",
    )
    results = {}
    for how in ("real", "fork", "kill"):
        pidfile = tmp_path / f"{how}.pid"
        env = {**os.environ, "PIDFILE": str(pidfile), "PYTHONPATH": pythonpath}
        argv = [sys.executable, "-m", "agenteval", "run", "cases.jsonl", "--agent",
                "slow_agent:answer", "--out", f"run-{how}", "--quiet"]  # fmt: skip
        if how != "real":
            argv = server.forked_argv(argv, {"env": env})
        proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        command_pid = int(pidfile.read_text())
        if how == "kill":
            proc.kill()
            proc.wait(timeout=30)
            deadline = time.monotonic() + 10
            while _alive(command_pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _alive(command_pid), "the command outlived its killed client"
            continue
        # the first stops new trials, the second cancels the one in flight (run/signals.py)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        results[how] = (proc.returncode, err.replace(f"run-{how}", "run-X"))
    assert results["fork"] == results["real"]
    assert results["real"][0] == 143, results  # 128 + SIGTERM: the command got both


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its supervisor) is not alive
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_what_cannot_be_the_same_is_started_for_real(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    argv = [sys.executable, "-m", "agenteval", "--help"]
    assert server.forked_argv(argv, {}) is not None
    assert server.forked_argv([sys.executable, "-X", "importtime", "-m", "agenteval"], {}) is None
    assert server.forked_argv(["agenteval", "--help"], {}) is None
    assert server.forked_argv(argv, {"preexec_fn": os.getpid}) is None
    assert server.forked_argv(argv, {"start_new_session": True}) is None
    assert server.forked_argv(argv, {"env": {**os.environ, "PYTHONWARNINGS": "error"}}) is None
    assert server.forked_argv(argv, {"env": {**os.environ, "LC_ALL": "C"}}) is None
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pydantic.py").write_text("raise SystemExit('a fake pydantic')\n")
    pythonpath = os.pathsep.join(filter(None, [str(shadow), os.environ.get("PYTHONPATH")]))
    assert server.forked_argv(argv, {"env": {**os.environ, "PYTHONPATH": pythonpath}}) is None
    assert server.forked_argv(argv, {"cwd": shadow}) is None
    # and only subprocess.run is routed: a Popen is the real command
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL) as proc:
        assert proc.args == argv
