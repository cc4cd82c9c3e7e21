"""Shared fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["pytester"]  # tests/testing/: the pytest plugin, run in a pytest of its own


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
