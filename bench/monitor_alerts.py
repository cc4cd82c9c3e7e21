"""The monitor's alerts by simulation: false alarms per day, and the delay to detect a drop.

    python bench/monitor_alerts.py [--days 200] [--windows-per-day 24] [--window-cases 100]
        [--base-cases 500] [--alpha-per-day 0.05] [--seed 1] [--population simple|bench]

Each simulated window is what ``agenteval monitor`` gates when the window closes: the
unpaired gate (:func:`agenteval.gate.unpaired.decide_unpaired`, the function
``compare_runs(..., mode="unpaired")`` calls) of the window's cases against the baseline's,
at the per-window level ``alpha_per_day / windows_per_day``
(:func:`agenteval.monitor.alerts.window_alpha`). Rows:

- **unchanged traffic**, a fresh baseline each day: false alarms per day (mean) and the
  share of days with at least one; the bound is ``alpha_per_day``. Beside it the same
  traffic tested at ``alpha_per_day`` per window (no correction), the monitor one would
  write first.
- **unchanged traffic, one baseline for every day**: the same mean, but clustered (a
  baseline that sits high makes every day's windows look low): the share of baselines
  with any alarm.
- **unchanged traffic, each window against the same window a week earlier** (what the
  monitor does by default once a week of windows exists): every window has a reference
  of its own, ``--window-cases`` cases like itself.
- **a 10-point drop** of one scorer from the first window: windows until the first alert
  (median, 90th percentile; "never" when not within two days).

Populations: ``simple`` (one pass/fail scorer at 0.8, fast; what the test uses) or
``bench`` (bench/gate_power.py's 12 pass/fail + 2 graded scorers with varied per-case
rates and 2% failed trials). tests/monitor/test_monitor_alerts_simulation.py runs
:func:`simulate` with a fixed seed.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agenteval.gate.unpaired import decide_unpaired
from agenteval.monitor.alerts import window_alpha
from agenteval.summary.percase import CaseAggregate, CaseScore

Draw = Callable[[random.Random, int, float], dict[str, CaseAggregate]]
_PASS = CaseScore(applicable=1, passed=1, total=1.0)
_FAIL = CaseScore(applicable=1, passed=0, total=0.0)


def simple(
    rng: random.Random, cases: int, drop: float, prefix: str = "c"
) -> dict[str, CaseAggregate]:
    """``cases`` cases of one pass/fail scorer passing at 0.8 - ``drop``."""
    p = 0.8 - drop
    out = {}
    for i in range(cases):
        agg = CaseAggregate(trials=1, answered=1)
        agg.scores["s00"] = _PASS if rng.random() < p else _FAIL
        out[f"{prefix}{i}"] = agg
    return out


def _bench_population() -> Draw:
    path = Path(__file__).resolve().parent / "gate_power.py"
    spec = importlib.util.spec_from_file_location("gate_power", path)
    assert spec is not None and spec.loader is not None
    gp = importlib.util.module_from_spec(spec)
    sys.modules["gate_power"] = gp
    spec.loader.exec_module(gp)

    def draw(rng: random.Random, cases: int, drop: float) -> dict[str, CaseAggregate]:
        sc = gp.scenario(rng.getrandbits(32), cases)
        return dict(gp.draw_run(sc, rng, drop))

    return draw


@dataclass(frozen=True, slots=True)
class Result:
    alarms_per_day: list[int]
    """False alarms on each simulated day (fresh baseline each day)."""
    delays: list[int | None]
    """Windows until the first alert after a drop (None: none within two days)."""


def _blocked(base: dict[str, CaseAggregate], cand: dict[str, CaseAggregate], alpha: float) -> bool:
    renamed = {f"w-{k}": v for k, v in cand.items()}  # windows share no case id
    return decide_unpaired(base, renamed, alpha=alpha, allow_underpowered=True).blocked


def simulate(
    *,
    days: int,
    windows_per_day: int = 24,
    window_cases: int = 100,
    base_cases: int = 500,
    alpha_per_day: float = 0.05,
    drop: float = 0.10,
    detect_runs: int = 20,
    seed: int = 1,
    draw: Draw = simple,
    corrected: bool = True,
    fixed_baseline: bool = False,
    week_earlier: bool = False,
) -> Result:
    """Unchanged days and drop runs (module docstring); ``corrected=False`` tests every
    window at ``alpha_per_day``; ``week_earlier`` gives each window a reference of its own
    of ``window_cases`` cases (last week's window, unchanged traffic)."""
    rng = random.Random(seed)
    window_s = 86400 // windows_per_day
    alpha = window_alpha(alpha_per_day, window_s) if corrected else alpha_per_day
    alarms = []
    base = draw(rng, base_cases, 0.0)
    for _ in range(days):
        if not fixed_baseline:
            base = draw(rng, base_cases, 0.0)
        alarms.append(
            sum(
                _blocked(
                    draw(rng, window_cases, 0.0) if week_earlier else base,
                    draw(rng, window_cases, 0.0),
                    alpha,
                )
                for _ in range(windows_per_day)
            )
        )
    delays: list[int | None] = []
    for _ in range(detect_runs):
        base = draw(rng, base_cases, 0.0)
        found = None
        for w in range(2 * windows_per_day):
            ref = draw(rng, window_cases, 0.0) if week_earlier else base
            if _blocked(ref, draw(rng, window_cases, drop), alpha):
                found = w + 1
                break
        delays.append(found)
    return Result(alarms, delays)


def _delay_text(delays: list[int | None]) -> str:
    """Median and 90th percentile of the delays, a miss counting as longer than any."""
    if not delays:
        return "not measured"
    ranked = sorted(delays, key=lambda d: (d is None, d or 0))

    def q(share: float) -> str:
        d = ranked[max(0, math.ceil(share * len(ranked)) - 1)]
        return "> 2 days" if d is None else f"{d}"

    missed = sum(d is None for d in delays)
    return f"median {q(0.5)} windows, 90th percentile {q(0.9)}; missed {missed} of {len(delays)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=200)
    ap.add_argument("--windows-per-day", type=int, default=24)
    ap.add_argument("--window-cases", type=int, default=100)
    ap.add_argument("--base-cases", type=int, default=500)
    ap.add_argument("--alpha-per-day", type=float, default=0.05)
    ap.add_argument("--detect-runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--population", choices=("simple", "bench"), default="simple")
    a = ap.parse_args()
    draw = simple if a.population == "simple" else _bench_population()
    common = dict(
        days=a.days,
        windows_per_day=a.windows_per_day,
        window_cases=a.window_cases,
        base_cases=a.base_cases,
        alpha_per_day=a.alpha_per_day,
        seed=a.seed,
        draw=draw,
    )
    print(
        f"population {a.population}; {a.windows_per_day} windows/day of {a.window_cases}"
        f" cases; baseline {a.base_cases} cases; alpha per day {a.alpha_per_day}"
    )
    for label, kw in (
        ("corrected, fresh baseline daily", {}),
        ("corrected, one baseline for all days", {"fixed_baseline": True}),
        ("corrected, the window a week earlier", {"week_earlier": True}),
        ("uncorrected (alpha per window)", {"corrected": False}),
    ):
        t0 = time.perf_counter()
        r = simulate(**common, detect_runs=a.detect_runs, **kw)  # type: ignore[arg-type]
        per_day = sum(r.alarms_per_day) / len(r.alarms_per_day)
        any_day = sum(1 for n in r.alarms_per_day if n) / len(r.alarms_per_day)
        print(
            f"{label:40s} false alarms/day {per_day:.4f}  days with one {any_day:.4f}"
            f"  10-point drop: {_delay_text(r.delays)}  ({time.perf_counter() - t0:.0f} s)"
        )


if __name__ == "__main__":
    main()
