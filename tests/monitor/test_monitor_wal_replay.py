"""A restart on a large write-ahead log keeps to the memory bounds: the log is read back a
segment at a time, and the spans replayed in flight stay within --max-pending-spans."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from monitor_harness import agent_trace, all_trials, otlp_json, served, wait_for

from agenteval.cli._common import flagged
from agenteval.monitor import MonitorConfig
from agenteval.monitor.pending import Tracker
from agenteval.monitor.wal import WriteAheadLog, encode_frame


def test_the_log_is_read_back_a_segment_at_a_time(tmp_path: Path) -> None:
    """Six segments of 1 MiB: opening the log and reading every frame back holds about
    one segment at a time (the peak is under half the log), and every frame comes back."""
    payload = bytes(range(256)) * 64  # 16 KiB
    for seq in range(1, 7):
        (tmp_path / f"{seq:012d}.wal").write_bytes(encode_frame(1, payload) * 64)
    tracemalloc.start()
    try:
        wal, frames = WriteAheadLog.open(tmp_path)
        n = sum(1 for f in frames if f.payload == payload)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == len(frames) == 6 * 64
    assert peak < 3 << 20, peak  # the log is 6 MiB
    wal._pool.shutdown()
    import os

    os.close(wal._fd)


def test_a_replay_past_the_bound_scores_as_it_goes_and_keeps_every_trace_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 logged requests of one trace each (600 spans) and --max-pending-spans 40: the
    replay never holds more than the bound and one request in flight; traces whose root
    ended are scored first, so trace 1, whose tool span is in the first request and root
    in the last, is still scored whole; each trace is one trial. Trace 301's root comes
    first and its tool span last: it is scored early, and that span is counted late."""
    out = tmp_path / "mon"
    wal = out / ".monitor" / "wal"
    wal.mkdir(parents=True)
    first, early = agent_trace(1), agent_trace(301)  # [tool, root]
    frames = [encode_frame(1, otlp_json([first[0]])), encode_frame(1, otlp_json([early[1]]))]
    frames += [encode_frame(1, otlp_json(agent_trace(i))) for i in range(2, 300)]
    frames.append(encode_frame(1, otlp_json([first[1]])))
    frames.append(encode_frame(1, otlp_json([early[0]])))
    (wal / "000000000001.wal").write_bytes(b"".join(frames))
    peak = [0]
    add = Tracker.add_spans

    def counting(self: Tracker, *a: object, **kw: object) -> None:
        add(self, *a, **kw)  # type: ignore[arg-type]
        peak[0] = max(peak[0], self.spans)

    monkeypatch.setattr(Tracker, "add_spans", counting)
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=1.0, tick_s=0.05, max_pending_spans=40)
    with served(cfg) as m:
        wait_for(lambda: m.monitor.metrics.trials == 300, what="300 trials")
        said = list(m.said)
        late = m.monitor.metrics.late_spans
    assert peak[0] <= 40 + 2
    keys = Counter(t["metadata"]["trace_id"] for t in all_trials(out))
    assert len(keys) == 300 and set(keys.values()) == {1}
    whole = next(t for t in all_trials(out) if t["metadata"]["trace_id"] == f"{1:032x}")
    assert [c["name"] for c in whole["tool_calls"]] == ["lookup"]
    assert whole["output"] == "The answer is 42"
    cut = next(t for t in all_trials(out) if t["metadata"]["trace_id"] == f"{301:032x}")
    assert cut["tool_calls"] == [] and late == 1  # scored without it; the span counted
    # the line names the setting; the command line shows it as its flag
    (line,) = [x for x in said if "during the replay" in x]
    assert line.endswith("to stay within max_pending_spans 40"), line
    assert flagged(line).endswith("to stay within --max-pending-spans 40")
