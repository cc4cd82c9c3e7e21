"""Shared fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``agenteval`` command in a subprocess."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli


@contextmanager
def fake_server_process(latency_ms: float = 0, *extra: str) -> Iterator[str]:
    """The fake OpenAI-compatible server in its own process; yields its base URL (.../v1)."""
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenteval.testing.fake_openai",
            "--port",
            "0",
            "--latency-ms",
            str(latency_ms),
            *extra,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line.startswith("READY"), line
        yield f"http://127.0.0.1:{line.split()[1]}/v1"
    finally:
        p.terminate()
        p.wait(10)
