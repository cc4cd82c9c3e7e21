"""Windows are run directories: read while they grow, closed on time, gated, alerted on."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for

from agenteval.cli import main
from agenteval.monitor import MonitorConfig
from agenteval.monitor.windows import window_name, window_start
from agenteval.rundir import read_header


def test_windows_are_aligned_to_the_epoch_and_named_by_their_start() -> None:
    t = 1796173200 + 1799.5  # 2026-12-02T01:29:59.5Z
    assert window_start(t, 3600) == 1796173200
    assert window_name(window_start(t, 3600), 3600) == "2026-12-02T01"
    assert window_name(window_start(t, 900), 900) == "2026-12-02T0115"
    assert window_name(window_start(t, 5), 5) == "2026-12-02T012955"


def _send(
    endpoint: str, first: int, n: int, answer: str = "The answer is 42", at: float | None = None
) -> None:
    """``n`` invocations, all started at ``at`` (epoch seconds; default now)."""
    start = time.time_ns() if at is None else int(at * 1e9)
    for i in range(first, first + n):
        body = otlp_json(agent_trace(i, answer, start_ns=start))
        assert post(endpoint + "/v1/traces", body)[0] == 200


HOUR_AGO = window_start(time.time(), 3600) - 3600.0
"""The start of a window long closed: traffic stamped then is scored into it and the
window closes at the next tick (the traces' own clock places them)."""


def test_a_growing_window_is_reported_and_gated_only_once_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, window_s=2, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    with served(cfg) as m:
        _send(m.endpoint, 1, 5)  # all started at one moment: one window
        wait_for(lambda: len(all_trials(out)) == 5, what="5 trials")
        window = next(d for d in out.iterdir() if not d.name.startswith("."))
        capsys.readouterr()
        assert main(["report", str(window)]) == 0
        got = capsys.readouterr()
        assert "is still being written" in got.err and "covers the 5 trials" in got.err
        assert "trials 5" in got.out
        assert main(["gate", str(window), str(window)]) == 2  # a partial run is no verdict
        assert "still being written" in capsys.readouterr().err
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the window closed")
    head = read_header(window)
    assert head.summary is not None and head.summary["trials"] == 5
    assert head.settings["monitor"]["window_start"] == window_start(head.created_at.timestamp(), 2)
    assert main(["gate", str(window), str(window), "--unpaired"]) == 0
    assert main(["rescore", str(window), "--out", str(tmp_path / "re")]) == 0
    csv = tmp_path / "trials.csv"
    assert main(["export", str(window), "--format", "csv", "--out", str(csv)]) == 0
    assert len(csv.read_text().splitlines()) == 6  # a header and the 5 trials
    from agenteval.view.catalog import find_run_dirs  # what `agenteval view DIR` lists

    assert find_run_dirs(out) == [window]


class _Hook:
    """A real webhook receiver on 127.0.0.1: answers 500 to the first POST, then 200."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []
        self.calls = 0
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.calls += 1
        if self.calls == 1:
            return web.Response(status=500)
        self.got.append(await request.json())
        return web.Response(text="ok")


@pytest.fixture
def hook() -> Iterator[_Hook]:
    h = _Hook()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runner_box: list[web.AppRunner] = []

    async def start() -> None:
        app = web.Application()
        app.router.add_post("/alert", h.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        h.url = f"http://127.0.0.1:{port}/alert"
        runner_box.append(runner)
        ready.set()

    t = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()))
    t.start()
    ready.wait(10)
    yield h
    asyncio.run_coroutine_threadsafe(runner_box[0].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    t.join(10)


def _baseline(tmp_path: Path, n: int) -> Path:
    """A run of ``n`` good invocations, made by import-traces from OTLP/JSON."""
    f = tmp_path / "base.jsonl"
    f.write_text("".join(otlp_json(agent_trace(10_000 + i)).decode() + "\n" for i in range(n)))
    run = tmp_path / "baseline"
    assert main(["import-traces", str(f), "--out", str(run), "--quiet"]) == 0
    return run


def test_a_worse_window_alerts_once_with_a_line_a_json_line_and_a_retried_webhook(
    tmp_path: Path, hook: _Hook
) -> None:
    """Baseline: 40 good invocations. The window: 30 whose answer ignores the tool result
    (tool_faithfulness fails). The gate blocks at the per-window level; the webhook's first
    POST gets 500 and the retry delivers it."""
    base = _baseline(tmp_path, 40)
    out = tmp_path / "mon"
    cfg = MonitorConfig(
        out=out, window_s=3600, idle_s=0.1, max_wait_s=1.0, tick_s=0.05, baseline=base
    )
    with served(cfg, webhook=hook.url) as m:
        _send(m.endpoint, 1, 30, answer="I do not know", at=HOUR_AGO)
        wait_for(lambda: (out / "alerts.jsonl").exists(), timeout=10, what="the alert")
        wait_for(lambda: len(hook.got) == 1, timeout=10, what="the webhook")
        said = list(m.said)
    alerts = [json.loads(x) for x in (out / "alerts.jsonl").read_text().splitlines()]
    assert len(alerts) == 1
    a = alerts[0]
    assert a["alpha_window"] == pytest.approx(0.05 / 24)
    assert a["window"] == window_name(int(HOUR_AGO), 3600)
    assert a["cases"] == 30
    tf = next(s for s in a["scorers"] if s["scorer"] == "tool_faithfulness")
    assert (tf["baseline"], tf["window"]) == (1.0, 0.0)
    assert hook.got == alerts and hook.calls == 2
    assert any(x.startswith("agenteval monitor: ALERT window ") for x in said)
    # the window and its check are recorded: a restart does not alert again
    with served(cfg, webhook=hook.url):
        time.sleep(0.3)
    assert len((out / "alerts.jsonl").read_text().splitlines()) == 1


def test_an_unchanged_window_raises_no_alert(tmp_path: Path) -> None:
    base = _baseline(tmp_path, 40)
    out = tmp_path / "mon"
    cfg = MonitorConfig(
        out=out, window_s=3600, idle_s=0.1, max_wait_s=1.0, tick_s=0.05, baseline=base
    )
    with served(cfg) as m:
        _send(m.endpoint, 1, 30, at=HOUR_AGO)
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, timeout=10, what="the close")
        # a late trace for the closed window reopens it and is added; no second check
        _send(m.endpoint, 100, 1, at=HOUR_AGO)
        wait_for(lambda: m.monitor.metrics.windows_closed == 2, timeout=10, what="a 2nd close")
    assert not (out / "alerts.jsonl").exists()
    windows = [d for d in out.iterdir() if not d.name.startswith(".")]
    assert (out / ".monitor" / "checked.log").read_text().split() == [w.name for w in windows]
    assert len(windows) == 1 and len(all_trials(out)) == 31
