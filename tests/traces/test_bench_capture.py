"""bench/capture.py runs end to end at a tiny size (it is not itself a test of speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "capture.py"


def test_capture_bench_prints_the_three_rows() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--spans", "6", "--trials", "20", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(result["us_per_trial"]) == {
        "no provider, capture off",
        "SDK provider, capture off",
        "SDK provider, capture on",
    }
    assert all(v > 0 for v in result["us_per_trial"].values())
