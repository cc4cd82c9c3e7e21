"""The unpaired gate's family-wise false-block rate and power, by simulation (the population
of bench/gate_power.py, drawn as two windows of traffic by bench/gate_power_unpaired.py).

600 no-change pairs, each two independent windows of cases from one population (4 pass/fail
and 1 graded scorer, per-case pass probabilities Beta-distributed, 2% failed trials on
average): 300 pairs of 60 and 60 cases, 300 of 40 and 80. The claim "false-block rate <=
alpha" is checked as: the upper end of the 99% Wilson interval of the observed rate is <=
alpha (seeded, so not flaky; a true rate above alpha would fail it). Smaller than the
bench's table (bench/gate_power_unpaired.py, docs/reports.md) to run in seconds.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from test_gate_simulation import _write

from agenteval.gate.unpaired import decide_unpaired
from agenteval.rundir import iter_trials
from agenteval.summary import stats
from agenteval.summary.percase import aggregate_cases

ALPHA = 0.05
Z99 = 2.5758293035489


def _bench() -> ModuleType:
    if "gate_power_unpaired" in sys.modules:
        return sys.modules["gate_power_unpaired"]
    path = Path(__file__).resolve().parents[2] / "bench" / "gate_power_unpaired.py"
    spec = importlib.util.spec_from_file_location("gate_power_unpaired", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gate_power_unpaired"] = mod
    spec.loader.exec_module(mod)
    return mod


sim = _bench()


def test_no_change_windows_are_blocked_at_most_alpha_of_the_time() -> None:
    rng = random.Random(21)
    blocked = pairs = 0
    for sizes in ((60, 60), (40, 80)):
        for _ in range(300):
            base, cand = sim.draw_windows(rng, *sizes, binary=4, graded=1)
            r = decide_unpaired(base, cand, alpha=ALPHA)
            assert r.mode == "unpaired" and r.family_size == 7
            blocked += r.blocked
            pairs += 1
    upper = stats.wilson_interval(blocked, pairs, z=Z99)[1]
    assert upper <= ALPHA, f"false-block rate {blocked / pairs:.3f}, 99% upper bound {upper:.3f}"


def test_a_twenty_point_drop_on_one_scorer_is_caught() -> None:
    rng = random.Random(22)
    caught = 0
    for _ in range(40):
        base, cand = sim.draw_windows(rng, 200, 200, drop=0.20, binary=4, graded=1)
        r = decide_unpaired(base, cand, alpha=ALPHA)
        caught += any(c.blocks and c.scorer == "s00" for c in r.scorers)
    assert caught >= 36  # the bench measures 95% with 14 scorers; fewer here, more power


def test_a_simulated_pair_gives_the_same_verdict_through_run_directories_and_the_cli(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    base, cand = sim.draw_windows(random.Random(23), 120, 150, drop=0.20)
    b_dir, c_dir = _write(tmp_path / "week1", base), _write(tmp_path / "week2", cand)
    in_memory = decide_unpaired(base, cand, alpha=ALPHA)
    read_back = decide_unpaired(
        aggregate_cases(iter_trials(b_dir)), aggregate_cases(iter_trials(c_dir)), alpha=ALPHA
    )
    assert read_back.model_dump() == in_memory.model_dump()
    out = tmp_path / "verdict.json"
    proc = cli("gate", b_dir, c_dir, "--json", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdict = json.loads(out.read_text())
    assert verdict["mode"] == "unpaired" and verdict["family_size"] == 16
    by_name = {s["scorer"]: s for s in verdict["scorers"]}
    for c in in_memory.scorers:
        assert by_name[c.scorer]["p_value"] == c.p_value
        assert by_name[c.scorer]["min_detectable_drop"] == c.min_detectable_drop
        assert by_name[c.scorer]["blocks"] == c.blocks
    assert by_name["s00"]["blocks"] and "s00 dropped" in proc.stdout
