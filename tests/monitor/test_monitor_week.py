"""The baseline "the same window a week earlier": each closed window is gated against
DIR/<start - 7 days> when that window exists and is closed, else against --baseline,
else not at all (said once).

A week cannot pass in a test, so the traffic is stamped: the monitor puts a trace in the
window of its own start time, so traces stamped a week and an hour ago build the earlier
window (closed at once: it is long past), those stamped an hour ago the window gated.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from monitor_harness import agent_trace, otlp_json, post, served, wait_for

from agenteval.cli import main
from agenteval.cli._common import flagged
from agenteval.monitor import MonitorConfig
from agenteval.monitor.checking import Checker
from agenteval.monitor.journal import Journal
from agenteval.monitor.windows import window_name, window_start

WEEK = 7 * 86400
TARGET = window_start(time.time(), 3600) - 3600  # the hour before this one: closed
EARLIER = TARGET - WEEK
GOOD, BAD = "The answer is 42", "I do not know"  # BAD ignores the tool: tool_faithfulness fails


def _send(endpoint: str, first: int, n: int, answer: str, at: float) -> None:
    for i in range(first, first + n):
        body = otlp_json(agent_trace(i, answer, start_ns=int(at * 1e9)))
        assert post(endpoint + "/v1/traces", body)[0] == 200


def _config(out: Path, **kw: object) -> MonitorConfig:
    return MonitorConfig(
        out=out,
        window_s=3600,
        idle_s=0.1,
        max_wait_s=0.5,
        tick_s=0.05,
        **kw,  # type: ignore[arg-type]
    )


def _alerts(out: Path) -> list[dict[str, object]]:
    p = out / "alerts.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []


def test_a_window_is_gated_against_the_same_window_a_week_earlier(tmp_path: Path) -> None:
    out = tmp_path / "mon"
    with served(_config(out)) as m:
        _send(m.endpoint, 1, 20, GOOD, EARLIER + 60)
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the earlier window closed")
        _send(m.endpoint, 100, 20, BAD, TARGET + 60)
        wait_for(lambda: m.monitor.metrics.windows_closed == 2, what="the window closed")
        said = list(m.said)
    (alert,) = _alerts(out)
    assert alert["window"] == window_name(TARGET, 3600)
    assert alert["reference"] == "week earlier"
    assert alert["reference_dir"] == str(out / window_name(EARLIER, 3600))
    tf = next(s for s in alert["scorers"] if s["scorer"] == "tool_faithfulness")  # type: ignore[attr-defined]
    assert (tf["baseline"], tf["window"]) == (1.0, 0.0)
    assert alert["alpha_window"] == pytest.approx(0.05 / 24)  # the level of any window
    checked = (out / ".monitor" / "checked.log").read_text().split()
    assert checked == [window_name(EARLIER, 3600), window_name(TARGET, 3600)]  # once each
    # the earlier window had no week before it and no --baseline: said once, not gated
    none = [x for x in said if "not gated" in x]
    line = (
        f"agenteval monitor: window {window_name(EARLIER, 3600)} not gated: no closed window"
        f" a week earlier ({window_name(EARLIER - WEEK, 3600)}) and no --baseline (said once:"
        " windows without a reference are not gated)"
    )
    # the library names the setting, the command line its flag
    assert none == [line.replace("no --baseline", "no baseline")]
    assert flagged(none[0]) == line


def _baseline(tmp_path: Path) -> Path:
    """A run of 40 good invocations, made by import-traces."""
    f = tmp_path / "base.jsonl"
    f.write_text("".join(otlp_json(agent_trace(10_000 + i)).decode() + "\n" for i in range(40)))
    run = tmp_path / "baseline"
    assert main(["import-traces", str(f), "--out", str(run), "--quiet"]) == 0
    return run


@pytest.mark.parametrize(
    ("earlier", "week_earlier"),
    [
        ("absent", True),
        ("present, but --no-baseline-week-earlier", False),
        ("present, --baseline given without --baseline-week-earlier", None),
    ],
)
def test_without_a_week_earlier_window_the_baseline_is_used(
    tmp_path: Path, earlier: str, week_earlier: bool | None
) -> None:
    out = tmp_path / "mon"
    base = _baseline(tmp_path)
    with served(_config(out, baseline=base, week_earlier=week_earlier)) as m:
        if earlier != "absent":  # as bad as the window: gated against it, nothing to see
            _send(m.endpoint, 1, 20, BAD, EARLIER + 60)
            wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the earlier window")
        closed = m.monitor.metrics.windows_closed
        _send(m.endpoint, 100, 20, BAD, TARGET + 60)
        wait_for(lambda: m.monitor.metrics.windows_closed == closed + 1, what="the window")
    alerts = [a for a in _alerts(out) if a["window"] == window_name(TARGET, 3600)]
    assert len(alerts) == 1
    assert alerts[0]["reference"] == "--baseline" and alerts[0]["reference_dir"] == str(base)


def test_with_no_reference_windows_are_not_gated_and_the_log_says_so_once(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    with served(_config(out)) as m:
        _send(m.endpoint, 1, 10, BAD, TARGET - 3600 + 60)
        _send(m.endpoint, 100, 10, BAD, TARGET + 60)
        wait_for(lambda: m.monitor.metrics.windows_closed == 2, what="two windows closed")
        said = [x for x in m.said if "not gated" in x]
    assert len(said) == 1 and not _alerts(out)
    checked = (out / ".monitor" / "checked.log").read_text().split()
    assert sorted(checked) == [window_name(TARGET - 3600, 3600), window_name(TARGET, 3600)]


def test_a_window_length_that_does_not_divide_a_week_has_no_week_earlier_window(
    tmp_path: Path,
) -> None:
    (tmp_path / ".monitor").mkdir()
    journal = Journal(tmp_path / ".monitor", 600)
    said: list[str] = []
    two_days = Checker(
        tmp_path, 2 * 86400, journal, said.append, baseline=None, week_earlier=True,
        alpha_per_day=0.05,
    )  # fmt: skip
    assert two_days.reference(tmp_path, 0) == (None, "no week-earlier window and no baseline")
    assert flagged(two_days.reference(tmp_path, 0)[1]).endswith("and no --baseline")
    hourly = Checker(
        tmp_path, 3600, journal, said.append, baseline=None, week_earlier=True,
        alpha_per_day=0.05,
    )  # fmt: skip
    # a directory of that name that is not a closed window of this monitor is no reference
    (tmp_path / window_name(TARGET - WEEK, 3600)).mkdir()
    ref, why = hourly.reference(tmp_path, TARGET)
    assert ref is None and why.startswith("no closed window a week earlier")


def test_by_simulation_the_week_earlier_reference_keeps_false_alarms_under_the_bound() -> None:
    """bench/monitor_alerts.py's simulation with each window gated against a reference of
    its own (last week's window, as many cases as itself), at sizes where alarms are
    frequent enough to count (alpha_per_day 0.5, 6 windows a day): under the bound, and
    far under the uncorrected rate. docs/monitor.md has the bench's numbers."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "bench" / "monitor_alerts.py"
    spec = importlib.util.spec_from_file_location("monitor_alerts_week", path)
    assert spec is not None and spec.loader is not None
    sim = importlib.util.module_from_spec(spec)
    sys.modules["monitor_alerts_week"] = sim
    spec.loader.exec_module(sim)
    sizes = dict(days=20, windows_per_day=6, window_cases=100, alpha_per_day=0.5, detect_runs=0)
    week = sim.simulate(**sizes, seed=7, week_earlier=True)
    raw = sim.simulate(**sizes, seed=7, week_earlier=True, corrected=False)
    per_day = sum(week.alarms_per_day) / len(week.alarms_per_day)
    assert per_day <= 0.5 < sum(raw.alarms_per_day) / len(raw.alarms_per_day)
