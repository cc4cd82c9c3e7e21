"""SIGKILL under load: every span acknowledged before the kill is scored exactly once.

The real command in a subprocess, fed by the real OpenTelemetry SDK exporter (OTLP/HTTP
protobuf, BatchSpanProcessor) in another; the exporter's wrapper notes each span it got a
200 for. The monitor is SIGKILLed mid-stream, started again on the same directory, and
the windows must then hold one trial per acknowledged trace, none twice. Takes ~8 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from monitor_harness import HERE, all_trials, wait_for

from agenteval.rundir import iter_trials

pytestmark = pytest.mark.reliability
TRAFFIC = HERE.parents[1] / "bench" / "monitor_traffic.py"


def _start(out: Path) -> tuple[subprocess.Popen[str], str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "monitor", "--listen", "127.0.0.1:0",
         "--out", str(out), "--idle", "0.3s", "--max-wait", "3s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.startswith("listening on http://127.0.0.1:"), (line, p.stderr and p.stderr.read())
    return p, line.split()[-1]


def _acked(path: Path) -> set[str]:
    if not path.exists():
        return set()
    data = path.read_text()
    return {ln.split()[0] for ln in data[: data.rfind("\n") + 1].splitlines()}


def test_sigkill_mid_stream_then_restart_scores_every_acknowledged_span_once(
    tmp_path: Path,
) -> None:
    out, acked = tmp_path / "mon", tmp_path / "acked.txt"
    first, endpoint = _start(out)
    traffic = subprocess.Popen(
        [sys.executable, str(TRAFFIC), endpoint, "2000",
         "--acked", str(acked), "--rate", "200", "--timeout", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        # kill once some traces are scored and more are in flight
        wait_for(lambda: len(all_trials(out)) >= 40, timeout=30, what="40 scored traces")
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        time.sleep(0.3)
    finally:
        traffic.kill()
        traffic.wait(10)
    before = {t["metadata"]["trace_id"] for t in all_trials(out)}
    old_segments = sorted(int(p.stem) for p in (out / ".monitor" / "wal").glob("*.wal"))
    want = _acked(acked)
    assert want, "nothing was acknowledged"
    second, _ = _start(out)
    try:
        wait_for(
            lambda: want <= {t["metadata"]["trace_id"] for t in all_trials(out)},
            timeout=30,
            what="every acknowledged trace scored",
        )
        time.sleep(0.8)  # anything scored twice would be written by now
    finally:
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=20)
    assert second.returncode == 0, err
    assert "replayed" in err  # the restart had work in its log
    trials = all_trials(out)
    keys = Counter((t["metadata"]["trace_id"], t["metadata"]["span_id"]) for t in trials)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1][:5]
    per_trace = Counter(t["metadata"]["trace_id"] for t in trials)
    assert all(per_trace[t] == 1 for t in want)
    assert before and not want <= before  # killed mid-stream: some scored, some in flight
    windows = [d for d in out.iterdir() if not d.name.startswith(".")]
    # every window reads as a run: no torn line, no (case, repeat) twice
    assert sum(sum(1 for _ in iter_trials(d)) for d in windows) == len(trials)
    # what the first process logged is scored and durable: its segments were deleted
    left = sorted(int(p.stem) for p in (out / ".monitor" / "wal").glob("*.wal"))
    assert old_segments and left and min(left) > max(old_segments)
