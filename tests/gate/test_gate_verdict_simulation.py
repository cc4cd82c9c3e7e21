"""The bounds docs/reports.md states for the three verdicts, by simulation (the agents of
bench/gate_power_verdicts.py, fixed seeds: not flaky). The bench prints the whole table;
these are its claims, small enough for CI (~2-6 s each on a busy 2-core machine)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from agenteval.summary import stats

ALPHA = 0.05
Z99 = 2.5758293035489


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "gate_power_verdicts.py"
    spec = importlib.util.spec_from_file_location("gate_power_verdicts", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gate_power_verdicts"] = mod
    spec.loader.exec_module(mod)
    return mod


sim = _bench()


def test_an_unchanged_deterministic_agent_passes_at_any_suite_size() -> None:
    for agent in ("pass/fail, deterministic", "graded, deterministic"):
        for n, sims in ((10, 30), (1000, 2)):
            after, _ = sim.verdicts(agent, n, 0.0, sims, seed=1)
            assert after == {"PASSED": sims}, (agent, n, after)


def test_an_unchanged_flaky_agent_with_repeats_is_blocked_at_most_alpha() -> None:
    sims = 250
    after, _ = sim.verdicts("pass/fail, 3 repeats, flaky", 30, 0.0, sims, seed=2)
    upper = stats.wilson_interval(after["BLOCKED"], sims, z=Z99)[1]
    assert upper <= ALPHA, after


def test_passed_under_a_true_drop_at_the_allowed_one_is_at_most_alpha() -> None:
    """The bound branch: with --max-drop 5 points and a true drop of 5 points, PASSED (the
    95% bound on the drop below 5 points) at most alpha of the time."""
    sims = 500
    after, before = sim.verdicts("pass/fail, 3 repeats, flaky", 30, 0.05, sims, 3, 0.05)
    upper = stats.wilson_interval(after["PASSED"], sims, z=Z99)[1]
    assert upper <= ALPHA, after
    assert before["PASSED"] > sims / 2  # the old rule passed most of them


def test_passed_by_no_case_worse_happens_at_the_stated_rate() -> None:
    """The no-worse branch: a deterministic agent whose true drop d flips each case with
    probability d passes exactly when none flipped: (1 - d) ** n of the time (the stated
    beta of docs/reports.md), and the old rule passed every such pair it did not block."""
    sims, n, d = 400, 10, 0.2
    after, before = sim.verdicts("pass/fail, deterministic", n, d, sims, seed=4)
    rate, beta = after["PASSED"] / sims, (1 - d) ** n
    assert abs(rate - beta) <= 3 * (beta * (1 - beta) / sims) ** 0.5, (rate, beta)
    assert before["PASSED"] + before["BLOCKED"] == sims and before["PASSED"] > 0.8 * sims
