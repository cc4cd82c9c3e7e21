"""The benchmark script runs end to end at tiny sizes (it is not itself a test of speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "run.py"


def test_bench_smoke_completes_and_prints_the_tables(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for heading in ("== throughput ==", "== scorer throughput", "== memory", "== targets =="):
        assert heading in out
    assert "== start-up" in out
    for row in ("agenteval --help", "agenteval score --help", "agenteval report RUN"):
        assert row in out
    assert "agenteval run, one case" in out
    for row in ("bare loop (process)", "agenteval run (CLI)", "evaluate() (in-process)"):
        assert row in out
    assert "agenteval rescore (process)" in out
    assert "Scorers.apply alone" in out
