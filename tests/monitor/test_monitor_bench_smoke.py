"""bench/monitor_ingest.py runs end to end at a tiny size (not a test of speed). ~6 s."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "monitor_ingest.py"


def test_the_ingest_bench_scores_every_invocation_and_prints_its_rows() -> None:
    r = subprocess.run(
        [sys.executable, str(BENCH), "--procs", "1", "--traces", "30", "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "scored 30 of 30 trials" in r.stdout
    for row in ("ingest:", "monitor CPU", "delay root end -> trial written", "monitor RSS"):
        assert row in r.stdout
