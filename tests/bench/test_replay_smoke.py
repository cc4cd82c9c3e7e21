"""bench/replay.py runs end to end at its smoke size (it is not itself a test of speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "replay.py"


def test_replay_bench_smoke_prints_the_ratio(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for row in ("bare loop (process)", "agenteval run, live", "agenteval run, replayed"):
        assert row in proc.stdout
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["n"] == 200 and result["replayed_vs_bare"] > 0
