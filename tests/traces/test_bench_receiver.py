"""bench/receiver.py runs end to end at a tiny size (it is not itself a test of speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "receiver.py"


def test_receiver_bench_prints_both_rows() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--trials",
            "4",
            "--rounds",
            "1",
            "--concurrency",
            "2",
            "--no-warmup",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (
        set(result["ms_per_trial"])
        == set(result["cpu_ms_per_trial"])
        == {
            "receiver off",
            "receiver on",
        }
    )
    assert all(v > 0 for v in result["ms_per_trial"].values())
