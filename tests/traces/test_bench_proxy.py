"""bench/proxy.py runs end to end at a tiny size (it is not itself a test of speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "proxy.py"


def test_proxy_bench_prints_direct_and_proxied_rows() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--calls", "10", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(result["us_per_call"]) == {
        "direct json",
        "proxy json",
        "direct stream",
        "proxy stream",
    }
    assert all(v > 0 for v in result["us_per_call"].values())
    assert set(result["overhead_us"]) == {"json", "stream"}
