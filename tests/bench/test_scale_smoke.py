"""``bench/scale.py`` runs end to end at tiny sizes (not a test of speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scale.py"


def test_scale_bench_smoke_prints_every_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for heading in (
        "== CPU-bound agent ==",
        "== per-trial overhead",
        "== rescore ==",
        "== judge ==",
    ):
        assert heading in out
    for row in ("one process", "--processes 2", "rescore, one process", "rescore --processes 2"):
        assert row in out
    assert "--processes 2, conc. 8" in out
