"""The alerts' false-alarm rate per day and their delay to detect a drop, by simulation.

bench/monitor_alerts.py's :func:`simulate` with a fixed seed, at sizes where alarms are
frequent enough to count in a second: 40 days of 6 windows of 100 cases against a
baseline of 300, ``alpha_per_day`` 0.5. (docs/monitor.md has the bench's numbers at the
defaults: 0.05 per day, 24 windows.) Takes ~2.5 s.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "monitor_alerts.py"
    spec = importlib.util.spec_from_file_location("monitor_alerts", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["monitor_alerts"] = mod
    spec.loader.exec_module(mod)
    return mod


SIZES = dict(days=40, windows_per_day=6, window_cases=100, base_cases=300, alpha_per_day=0.5)


def test_false_alarms_per_day_stay_under_alpha_per_day_and_a_drop_is_found() -> None:
    sim = _bench()
    r = sim.simulate(**SIZES, detect_runs=10, seed=7)
    per_day = sum(r.alarms_per_day) / len(r.alarms_per_day)
    assert per_day <= 0.5  # the Bonferroni bound: alpha_per_day
    assert None not in r.delays and max(r.delays) <= 6  # a 10-point drop: within a day
    # without the correction the same traffic raises far more alarms, over the bound
    raw = sim.simulate(**SIZES, detect_runs=0, seed=7, corrected=False)
    assert sum(raw.alarms_per_day) / len(raw.alarms_per_day) > 0.5 > per_day
