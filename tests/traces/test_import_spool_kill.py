"""import-traces SIGKILLed while its spool is in use leaves nothing in TMPDIR (issue 28,
cause 7: the SQLite spool, 17-19 MiB per run, was left behind). The spool's file is
unlinked as soon as SQLite opened it; the data lives in the open file only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_traces import otlp_request, otlp_span, spool_fd

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc/PID/fd to see the spool open"
)


def test_sigkill_during_the_spool_leaves_no_file_in_tmpdir(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    f = tmp_path / "t.jsonl"
    with open(f, "w") as fh:  # 40,000 invocations: a few seconds of spooling
        for i in range(0, 40_000, 500):
            fh.write(json.dumps(otlp_request(*(otlp_span(i + j) for j in range(500)))) + "\n")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "import-traces", str(f), "--out", str(out)],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        target = None
        while target is None and time.monotonic() < deadline and proc.poll() is None:
            target = spool_fd(proc.pid)
            time.sleep(0.005)
        assert target is not None, "the import never opened its spool"
        # the name lives only between SQLite's open and the unlink just after it
        named_until = time.monotonic() + 1.0
        while not target.endswith("(deleted)") and time.monotonic() < named_until:
            time.sleep(0.001)
            target = spool_fd(proc.pid) or target
        assert target.endswith("(deleted)"), f"the spool has a name while in use: {target}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert list(tmpdir.iterdir()) == [], "the killed import left its spool behind"
    assert not out.exists()
