"""Processes the benchmark starts: the fake endpoint, and measured children.

Every measured program runs in its own child process and is reaped with ``os.wait4``,
which returns that child's own resource usage (CPU seconds, peak RSS) — the numbers
``resource.getrusage(RUSAGE_CHILDREN)`` accumulates, but for one child at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PY = sys.executable
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Measured:
    """One child process: wall time from spawn to exit, its CPU and peak RSS."""

    wall_s: float
    cpu_s: float
    rss_mb: float
    rc: int
    stdout: str
    stderr: str
    server_cpu_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def json_line(self) -> dict[str, Any]:
        """The last stdout line that is a JSON object (children report through it)."""
        for line in reversed(self.stdout.splitlines()):
            if line.startswith("{"):
                return dict(json.loads(line))
        return {}


def agenteval_cmd() -> list[str]:
    """The ``agenteval`` console script next to this interpreter, else ``python -m agenteval``."""
    script = Path(PY).with_name("agenteval")
    return [str(script)] if script.exists() else [PY, "-m", "agenteval"]


def env_for(src: str | Path | None) -> dict[str, str] | None:
    """The environment of a child that runs the agenteval under ``src`` (a ``src`` folder
    put first on PYTHONPATH: ``--baseline-src`` runs today's code beside the new); None:
    this environment as it is."""
    if src is None:
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(src).resolve()), str(Path(__file__).parent)])
    return env


def code_src() -> Path:
    """The ``src`` folder of the agenteval this interpreter imports (the code under test)."""
    import agenteval

    return Path(agenteval.__file__).resolve().parents[1]


class FakeServer:
    """``python -m agenteval.testing.fake_openai`` in its own process (``READY <port>``)."""

    def __init__(self, latency_ms: float) -> None:
        self.latency_ms = latency_ms
        self.proc = subprocess.Popen(
            [
                PY,
                "-m",
                "agenteval.testing.fake_openai",
                "--port",
                "0",
                "--latency-ms",
                f"{latency_ms:g}",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "READY":
            self.close()
            raise RuntimeError(f"fake endpoint did not start: {line!r}")
        self.port = int(line[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def cpu_s(self) -> float | None:
        """CPU seconds the server process has used so far (Linux /proc; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / _TICKS

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def measure(
    cmd: list[str],
    *,
    server: FakeServer | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Measured:
    """Run ``cmd`` (in ``cwd``) to completion; wall, CPU and peak RSS of that child alone."""
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"agenteval-bench-{os.getpid()}.out"
    err_path = out_path.with_suffix(".err")
    s0 = server.cpu_s() if server else None
    with open(out_path, "w+") as out, open(err_path, "w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    out_path.unlink(missing_ok=True)
    err_path.unlink(missing_ok=True)
    s1 = server.cpu_s() if server else None
    return Measured(
        wall_s=wall,
        cpu_s=ru.ru_utime + ru.ru_stime,
        rss_mb=ru.ru_maxrss / 1024 if sys.platform != "darwin" else ru.ru_maxrss / 2**20,
        rc=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        server_cpu_s=(s1 - s0) if s0 is not None and s1 is not None else None,
    )


def check_run(run_dir: Path, n: int, scorers: int) -> str | None:
    """None when ``run_dir`` holds ``n`` answered trials each with ``scorers`` scores."""
    lines = 0
    with open(run_dir / "trials.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            lines += 1
            if d.get("failure") is not None:
                return f"trial {d['case_id']} failed: {d['failure']}"
            if len(d.get("scores") or {}) != scorers:
                return f"trial {d['case_id']} has {len(d.get('scores') or {})} scores"
    if lines != n:
        return f"{lines} trials written, expected {n}"
    header = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    if not header.get("summary"):
        return "run.json has no summary"
    return None


def check_scored(run_dir: Path, n: int, scorers: int) -> str | None:
    """None when ``run_dir`` holds ``n`` trials each with ``scorers`` scores."""
    lines = 0
    with open(run_dir / "trials.jsonl", encoding="utf-8") as f:
        for line in f:
            lines += 1
            if len(json.loads(line)["scores"]) != scorers:
                return f"line {lines} lacks scores"
    return None if lines == n else f"{lines} trials, expected {n}"
