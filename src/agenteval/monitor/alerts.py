"""Alerts: each closed window against the baseline, with the false alarms per day bounded.

When a window closes, the unpaired gate (:func:`agenteval.gate.compare_runs` with
``mode="unpaired"``, :mod:`agenteval.gate.unpaired` for its rules) compares it with the
``--baseline`` run at the **per-window level**

    alpha_window = alpha_per_day * window_s / 86400

(``--alpha-per-day 0.05`` with ``--window 1h``: 0.05 / 24 = 0.00208 per window). Each
window's gate keeps its chance of blocking unchanged traffic at most alpha_window (its
tests are one Holm family), so by the union bound (Bonferroni; it needs no independence
between windows, and they are not independent: all share the baseline) the expected
number of false alarms per day is at most ``alpha_per_day``, and so is the chance of any
false alarm in a day. Fisher's test is conservative, so the rate is lower still:
bench/bench_monitor_alerts.py simulates it (docs/monitor.md has the numbers).

Two limits, stated: the bound is over baselines drawn like the traffic; given one
baseline that happens to sit high, every window looks lower and the false alarms of that
baseline's days cluster (the simulation shows both). And the gate's **safety** rules
(:mod:`agenteval.gate.unpaired` rule 1a, "none in baseline") are rules, not tests at
alpha: a safety scorer the baseline never failed alerts on its first failure in a window,
whatever the level.

An alert is a line on stderr (``agenteval monitor: ALERT window ...``), a JSON line in
``DIR/alerts.jsonl`` (:func:`alert_record`), and, with ``--alert-webhook URL``, a POST
of that JSON sent in the background (:class:`Webhook`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agenteval._util.say import Say
from agenteval.errors import InputError
from agenteval.gate import GateResult, compare_runs
from agenteval.monitor._post import Poster

__all__ = ["Webhook", "alert_record", "check_window", "window_alpha"]

DAY_S = 86400


def window_alpha(alpha_per_day: float, window_s: int) -> float:
    """The level each window is tested at (module docstring)."""
    if not 0.0 < alpha_per_day < 1.0:
        raise InputError(f"must be within (0, 1), got {alpha_per_day}", field="alpha_per_day")
    return min(alpha_per_day * window_s / DAY_S, 0.5)


def check_window(baseline: str | Path, window: str | Path, alpha: float) -> GateResult | None:
    """The unpaired gate of ``window`` against ``baseline`` at ``alpha``; None when the
    window has no trial to compare."""
    try:
        return compare_runs(baseline, window, alpha=alpha, mode="unpaired")
    except InputError as e:
        if "no trials" in e.message and Path(e.file or "") == Path(window):
            return None
        raise


def alert_record(
    window: str, run_dir: Path, result: GateResult, alpha: float, alpha_per_day: float
) -> dict[str, Any]:
    """The JSON of one alert: the window, its run directory, the levels, why it blocked,
    and each compared scorer's rates and p-value."""
    return {
        "window": window,
        "run": str(run_dir),
        "baseline_run": result.baseline_run,
        "alpha_window": alpha,
        "alpha_per_day": alpha_per_day,
        "cases": result.candidate_cases,
        "reasons": list(result.reasons),
        "scorers": [
            {
                "scorer": c.scorer,
                "baseline": c.baseline,
                "window": c.candidate,
                "delta": c.delta,
                "p_value": c.p_value,
            }
            for c in result.scorers
        ],
    }


def alert_line(rec: dict[str, Any]) -> str:
    """The stderr line of an alert."""
    why = "; ".join(rec["reasons"]) or "blocked"
    return f"agenteval monitor: ALERT window {rec['window']} ({rec['cases']} cases): {why}"


class Webhook(Poster):
    """POSTs alerts to a URL from a background task: each is retried with exponential
    backoff (``first_delay_s``, doubling, at most ``max_delay_s``) on a connection error
    or a status other than 2xx, up to ``attempts`` times, then dropped with one line. At
    most ``max_queued`` wait; beyond, the oldest is dropped. :meth:`send` never waits."""

    def __init__(
        self,
        url: str,
        say: Say,
        *,
        attempts: int = 8,
        first_delay_s: float = 0.5,
        max_delay_s: float = 60.0,
        timeout_s: float = 10.0,
        max_queued: int = 100,
    ) -> None:
        super().__init__(
            url,
            say,
            attempts=attempts,
            first_delay_s=first_delay_s,
            max_delay_s=max_delay_s,
            timeout_s=timeout_s,
            max_queued=max_queued,
        )

    def send(self, record: dict[str, Any]) -> None:
        """Queue one alert (never waits)."""
        self._enqueue([record])

    def body(self, items: list[Any]) -> bytes:
        return json.dumps(items[0]).encode()

    def gave_up(self, items: list[Any]) -> str:
        return (
            f"agenteval monitor: alert webhook {self.url}: gave up on the alert of"
            f" window {items[0].get('window')} after {self.attempts} attempts"
        )
