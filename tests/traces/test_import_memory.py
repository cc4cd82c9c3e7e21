"""``import-traces`` streams: its peak memory does not grow with the number of spans.

The real CLI runs in subprocesses (bench/import_traces.py's generator and measurement:
OTLP/JSON lines as the Collector's file exporter writes, 5 GenAI spans per invocation)
on 5,000 and 50,000 spans; peak RSS (``ru_maxrss`` of the child) may grow by a few MiB,
far less than proportionally. Measured (docs/traces.md): all-in-memory import grew by
~165 MiB between these sizes, the streamed one by under 10 MiB. The scorers are left out
(``--no-builtin-scorers``) to keep the test fast: scoring is per trial and keeps nothing.

The bench itself runs in smoke mode in tests/bench/test_import_traces_smoke.py. The
1,000,000-span row runs only with ``AGENTEVAL_BENCH_1M=1`` (minutes).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "import_traces.py"
SMALL, BIG = 5_000, 50_000
MAX_GROWTH_MIB = 30.0
"""Allowed growth of peak RSS from SMALL to BIG spans (all-in-memory: ~165 MiB)."""


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_import_traces", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_peak_memory_does_not_grow_with_the_spans(tmp_path: Path) -> None:
    bench = _bench()
    peaks = {}
    for n in (SMALL, BIG):
        f = tmp_path / f"{n}.jsonl"
        spans = bench.write_traces(f, n)
        m = bench.measure(REPO / "src", [f], tmp_path / f"run{n}", "--no-builtin-scorers")
        invocations = spans // bench.SPANS_PER_TRACE
        assert (
            f"{spans} spans, {invocations} invocations; {invocations} trials of"
            f" {invocations} cases" in m["stderr"]
        )
        lines = (tmp_path / f"run{n}" / "trials.jsonl").read_text().count("\n")
        assert lines == invocations
        peaks[n] = m["peak_rss_mib"]
        f.unlink()
    growth = peaks[BIG] - peaks[SMALL]
    assert growth < MAX_GROWTH_MIB, peaks


@pytest.mark.skipif(
    not os.environ.get("AGENTEVAL_BENCH_1M"), reason="minutes long: set AGENTEVAL_BENCH_1M=1"
)
def test_a_million_spans_import_in_flat_memory(tmp_path: Path) -> None:
    bench = _bench()
    f = tmp_path / "1m.jsonl"
    spans = bench.write_traces(f, 1_000_000)
    m = bench.measure(REPO / "src", [f], tmp_path / "run")
    assert f"{spans} spans, 200000 invocations; 200000 trials" in m["stderr"]
    assert m["peak_rss_mib"] < 200, m  # all in memory: ~4 GiB
