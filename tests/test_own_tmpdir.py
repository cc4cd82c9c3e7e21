"""Each test gets a TMPDIR of its own (tests/conftest.py), empty at its start, so that a test
asserting "nothing left in TMPDIR" sees only its own files while other workers run."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

_SEEN: list[str] = []


@pytest.mark.parametrize("i", [0, 1])
def test_each_test_has_an_empty_tmpdir_of_its_own(i: int, tmp_path: Path) -> None:
    own = tempfile.gettempdir()
    assert os.environ["TMPDIR"] == own and not any(Path(own).iterdir())
    assert own not in _SEEN and not str(tmp_path).startswith(own)
    _SEEN.append(own)
    child = subprocess.run(
        [sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.stdout.strip() == own  # subprocesses inherit it
    assert len(own) < 40  # AF_UNIX socket paths under it stay short
