"""The run cannot be written: one line, exit 5, what was written kept, ``--resume`` finishes.

Real faults, no mocks: a file-size limit on the child process (``RLIMIT_FSIZE``: the
kernel fails writes past it with ``EFBIG``, as a full disk fails them with ``ENOSPC``),
``/dev/full`` (a real ``ENOSPC``), and a read-only bind mount in a user namespace
(skipped where user namespaces are not allowed).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from reliability_support import agenteval_cmd, cli_env, no_traceback, run_cli, write_jsonl

from agenteval.rundir import iter_trials, read_header

pytestmark = pytest.mark.reliability

EXIT_IO = 5
AGENT = ("--agent", "_robust_agents:quick", "--concurrency", "4", "--quiet")


def _dataset(tmp: Path, n: int = 60) -> Path:
    return write_jsonl(tmp / "cases.jsonl", [{"id": f"c{i}", "input": f"q{i}"} for i in range(n)])


def _run_with_file_limit(
    limit: int, *args: str | os.PathLike[str]
) -> subprocess.CompletedProcess[str]:
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        agenteval_cmd(*args),
        capture_output=True,
        text=True,
        env=cli_env({"PYTHONDONTWRITEBYTECODE": "1"}),
        preexec_fn=preexec,
        timeout=120,
    )


def _one_error_line(stderr: str) -> str:
    assert no_traceback([stderr]), stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("agenteval: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_disk_full_mid_run_exits_5_keeps_what_was_written_and_resume_finishes(
    tmp_path: Path,
) -> None:
    """Bug: a write error mid-run gave a traceback, exit 1 and no summary."""
    ds = _dataset(tmp_path)
    out = tmp_path / "run"
    r = _run_with_file_limit(24_000, "run", ds, *AGENT, "--out", out)
    assert r.returncode == EXIT_IO, r.stderr
    line = _one_error_line(r.stderr)
    assert line == (
        f"agenteval: error: cannot write {out / 'trials.jsonl'}: File too large;"
        " what was written is kept (--resume continues)"
    )
    kept = (out / "trials.jsonl").read_bytes()
    complete = kept[: kept.rfind(b"\n") + 1]
    written = list(iter_trials(out))  # every complete line is a valid trial
    assert 0 < len(written) < 60
    assert read_header(out).summary is None  # no summary of a run that stopped on an error

    resumed = run_cli("run", ds, *AGENT, "--out", out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    final = list(iter_trials(out))  # a second line for one trial would raise here
    assert sorted(t.key for t in final) == sorted((f"c{i}", 0) for i in range(60))
    assert (out / "trials.jsonl").read_bytes().startswith(complete)  # nothing written was lost
    summary = read_header(out).summary
    assert summary is not None and summary["trials"] == 60


def test_no_space_left_for_the_summary_exits_5_and_resume_writes_it(tmp_path: Path) -> None:
    """A real ``ENOSPC``: ``run.json`` is replaced through ``run.json.tmp``; once the run is
    under way that name is made a link to ``/dev/full``, so the summary cannot be written."""
    ds = _dataset(tmp_path, 12)
    out = tmp_path / "run"
    p = subprocess.Popen(
        agenteval_cmd("run", ds, "--agent", "_robust_agents:slow", "--out", out, "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    try:
        trials = out / "trials.jsonl"
        deadline = time.monotonic() + 60
        while not (trials.exists() and trials.read_bytes().count(b"\n") >= 1):
            assert time.monotonic() < deadline and p.poll() is None, p.communicate()
            time.sleep(0.02)
        (out / "run.json.tmp").symlink_to("/dev/full")
        _, stderr = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == EXIT_IO, stderr
    assert _one_error_line(stderr).startswith(
        f"agenteval: error: cannot write {out / 'run.json'}: No space left on device;"
    )
    assert len(list(iter_trials(out))) == 12  # every trial was written before
    assert read_header(out).summary is None

    (out / "run.json.tmp").unlink()
    resumed = run_cli("run", ds, "--agent", "_robust_agents:slow", "--out", out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    summary = read_header(out).summary
    assert summary is not None and summary["trials"] == 12


def test_a_run_that_cannot_even_start_writing_exits_5(tmp_path: Path) -> None:
    ds = _dataset(tmp_path, 5)
    out = tmp_path / "run"
    r = _run_with_file_limit(1000, "run", ds, *AGENT, "--out", out)  # run.json is bigger
    assert r.returncode == EXIT_IO, r.stderr
    assert _one_error_line(r.stderr).startswith(f"agenteval: error: cannot write {out}")
    assert "File too large" in r.stderr
    assert not (out / "run.json").exists()  # no half-made run is left to block the next one


def _read_only(directory: Path, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI with ``directory`` bind-mounted read-only (in a private mount namespace)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1)")
    probe = subprocess.run([unshare, "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not allowed here")
    d = str(directory)
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
    return subprocess.run(
        [unshare, "-rm", "sh", "-c", script, "sh", d, *agenteval_cmd(*args)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )


def test_read_only_out_exits_5_and_resume_works_once_writable(tmp_path: Path) -> None:
    """Bug: a read-only ``--out`` gave a traceback and exit 1."""
    ds = _dataset(tmp_path, 8)
    parent = tmp_path / "ro"
    parent.mkdir()
    out = parent / "run"
    fresh = _read_only(parent, "run", ds, *AGENT, "--out", out)
    assert fresh.returncode == EXIT_IO, fresh.stderr
    assert "Read-only file system" in _one_error_line(fresh.stderr)

    done = run_cli("run", ds, *AGENT, "--out", out)  # writable again: the run completes
    assert done.returncode == 0, done.stderr
    assert len(list(iter_trials(out))) == 8
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    blocked = _read_only(parent, "run", ds, *AGENT, "--out", out, "--resume")
    assert blocked.returncode == EXIT_IO, blocked.stderr
    assert "Read-only file system" in _one_error_line(blocked.stderr)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
