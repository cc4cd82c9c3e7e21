"""import-traces when its temporary spool (in TMPDIR) cannot be written: one line, exit 5.

Real fault, no mocks: a file-size limit on the child process (``RLIMIT_FSIZE``), so the
spool's SQLite file cannot grow past 1 MiB, as on a full disk. Bug: sqlite3's
``disk I/O error`` came out as a traceback and exit 1.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_traces import spool_fd

LIMIT = 1 << 20

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE faults are tested on Linux"
)


def _trace(tmp: Path, output: str) -> Path:
    attrs = {"gen_ai.operation.name": "invoke_agent", "input.value": "hi", "output.value": output}
    span = {
        "traceId": "1" * 32,
        "spanId": "a" * 16,
        "name": "invoke_agent a",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    f = tmp / "t.json"
    f.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return f


def test_import_traces_spool_full_exits_5_before_the_run_exists(tmp_path: Path) -> None:
    spool = tmp_path / "tmp"
    spool.mkdir()
    out = tmp_path / "out"
    trace = _trace(tmp_path, "x" * 2 * LIMIT)

    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    r = subprocess.run(
        [sys.executable, "-m", "agenteval", "import-traces", str(trace), "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(spool)},
        preexec_fn=preexec,
        timeout=120,
    )
    assert r.returncode == 5, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(
        f"agenteval: error: cannot write the import's temporary spool in {spool}:"
    )
    assert "set TMPDIR" in r.stderr
    assert not out.exists()
    assert list(spool.iterdir()) == []  # the spool is removed


def _big_trace_file(path: Path, n: int) -> Path:
    with open(path, "w") as f:
        for i in range(n):
            attrs = {"gen_ai.operation.name": "invoke_agent", "input.value": f"q{i}"}
            span = {
                "traceId": f"{i + 1:032x}",
                "spanId": "a" * 16,
                "name": "invoke_agent a",
                "startTimeUnixNano": "1700000000000000000",
                "endTimeUnixNano": "1700000001000000000",
                "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
            }
            f.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    return path


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_stop_signal_while_spooling_removes_the_spool(tmp_path: Path, signame: str) -> None:
    """Bug: SIGTERM and SIGHUP (a killed job, a closed terminal) left the spool, about
    twice the input's size, in TMPDIR; docs/traces.md says it is removed when the
    command ends. Ctrl-C removed it."""
    import signal
    import time

    spool = tmp_path / "tmp"
    spool.mkdir()
    trace = _big_trace_file(tmp_path / "big.jsonl", 60_000)
    out = tmp_path / "o"
    p = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "import-traces", str(trace), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(spool)},
    )  # fmt: skip
    try:
        end = time.monotonic() + 60
        while spool_fd(p.pid) is None and time.monotonic() < end:  # its file is nameless
            time.sleep(0.02)
        assert spool_fd(p.pid) is not None, "the spool was never made"
        time.sleep(0.3)
        p.send_signal(getattr(signal, signame))
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + getattr(signal, signame), err
    assert "Traceback" not in err, err
    assert list(spool.iterdir()) == []
