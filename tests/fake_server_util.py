"""Test helper: the fake OpenAI-compatible server in its own process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


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
