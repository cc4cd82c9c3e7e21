"""``bench/import_traces.py`` runs end to end at tiny sizes, side by side with a baseline
(here the same code), on every input it builds (not a test of speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "import_traces.py"


def test_import_bench_smoke_prints_every_row() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--baseline-src", str(REPO / "src"), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout
    for case in ("json, 1 file(s)", "protobuf, 1 file(s)", "1 trace, 20 invocations"):
        assert case in out
    rows = json.loads(out.strip().splitlines()[-1])
    assert [(r["code"], r["spans"]) for r in rows] == [
        ("new", 200),
        ("baseline", 200),
        ("new", 200),
        ("baseline", 200),
        ("new", 100),
        ("baseline", 100),
    ]
    for r in rows:
        assert r["cpu_s"] > 0 and r["wall_s"] > 0 and r["peak_rss_mib"] > 0
        assert "import-traces:" in r["stderr"]
