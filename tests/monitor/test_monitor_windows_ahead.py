"""A window far in the future (a sender's broken clock) closes after its last trial, not
at its end years away; the next window (a sender seconds ahead) stays open as usual."""

from __future__ import annotations

import time
from pathlib import Path

from monitor_harness import agent_trace, otlp_json, post, served, wait_for

from agenteval.monitor import MonitorConfig
from agenteval.monitor.windows import close_at, far_ahead, window_name, window_start
from agenteval.rundir import read_header
from agenteval.rundir.lock import RunLock

HOUR = 3600


def test_far_ahead_is_more_than_one_window_after_the_monitors_clock() -> None:
    now = 1796173200.0 + 10  # 10 s into 2026-12-02T01
    assert not far_ahead(window_start(now, HOUR) + HOUR, HOUR, now)  # the next window
    assert far_ahead(window_start(now, HOUR) + 2 * HOUR, HOUR, now)
    # the next window closes at its end; one years ahead, after its last trial
    nxt = window_start(now, HOUR) + HOUR
    assert close_at(nxt, HOUR, now, 1.0, now) == nxt + HOUR + 1.0
    assert close_at(nxt + 5 * 365 * 86400, HOUR, now, 1.0, now) == now + 1.0


def _baseline(tmp_path: Path) -> Path:
    from agenteval.cli import main

    f = tmp_path / "base.jsonl"
    f.write_text("".join(otlp_json(agent_trace(10_000 + i)).decode() + "\n" for i in range(5)))
    run = tmp_path / "baseline"
    assert main(["import-traces", str(f), "--out", str(run), "--quiet"]) == 0
    return run


def test_a_trace_stamped_years_ahead_is_written_and_its_window_closed_ungated(
    tmp_path: Path,
) -> None:
    """Trace 1 is stamped five years ahead, trace 2 in the next hour. The far window is
    closed (summary stored, lock released) about --max-wait + --idle after its trial, and
    not gated against the baseline (its time has not come); the next hour's window stays
    open, as a window still to come."""
    out = tmp_path / "mon"
    cfg = MonitorConfig(
        out=out, window_s=HOUR, idle_s=0.1, max_wait_s=0.5, tick_s=0.05,
        baseline=_baseline(tmp_path),
    )  # fmt: skip
    now = time.time()
    ahead = now + 5 * 365 * 86400
    nxt = window_start(now, HOUR) + HOUR + 1
    far_dir = out / window_name(window_start(ahead, HOUR), HOUR)
    next_dir = out / window_name(window_start(nxt, HOUR), HOUR)
    with served(cfg) as m:
        for i, at in ((1, ahead), (2, nxt)):
            body = otlp_json(agent_trace(i, start_ns=int(at * 1e9)))
            assert post(m.endpoint + "/v1/traces", body)[0] == 200
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, timeout=10, what="a close")
        time.sleep(0.3)  # both trials were written together: the next would have closed too
        assert m.monitor.metrics.windows_closed == 1
        assert RunLock.holder(next_dir) is not None
        assert RunLock.holder(far_dir) is None
        head = read_header(far_dir)
        assert head.finished_at is not None and head.summary is not None
        assert head.summary["trials"] == 1
        checked = out / ".monitor" / "checked.log"
        assert not checked.exists() or far_dir.name not in checked.read_text().split()
    assert not (out / "alerts.jsonl").exists()
