"""The unpaired gate's false-block rate and power by simulation, next to the paired gate's.

    python bench/gate_power_unpaired.py [--pairs 1000] [--seed 1] [--alpha 0.05] [--null-only]

The population is the one of bench/gate_power.py (12 pass/fail and 2 graded scorers,
per-case pass probabilities Beta-distributed around scorer means 0.55-0.95, 2% failed
trials on average). *Unpaired*: each run is a fresh window of traffic, its own cases drawn
from that population (a new :func:`gate_power.scenario` per run; the candidate's case ids
are renamed so the runs share none), then scored once; the candidate's ``s00`` (mean 0.8)
drops by 10 or 20 points in the power rows. *Paired*, for contrast: both runs over the same
cases (:func:`gate_power.draw_pair`), the gate of :func:`agenteval.gate.paired.decide`. Sizes are
baseline/candidate cases; the false-block rows must stay <= alpha.
``tests/test_gate_unpaired_simulation.py`` imports :func:`draw_windows` from here.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path
from types import ModuleType

from agenteval.gate.paired import decide
from agenteval.gate.unpaired import decide_unpaired
from agenteval.summary import stats
from agenteval.summary.percase import CaseAggregate


def _gate_power() -> ModuleType:
    if "gate_power" in sys.modules:
        return sys.modules["gate_power"]
    path = Path(__file__).resolve().parent / "gate_power.py"
    spec = importlib.util.spec_from_file_location("gate_power", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gate_power"] = mod
    spec.loader.exec_module(mod)
    return mod


gp = _gate_power()


def draw_windows(
    rng: random.Random,
    base_cases: int = 200,
    cand_cases: int = 200,
    drop: float = 0.0,
    binary: int = 12,
    graded: int = 2,
) -> tuple[dict[str, CaseAggregate], dict[str, CaseAggregate]]:
    """Two windows of traffic from one population, sharing no case id; ``drop`` > 0
    lowers ``s00`` in the candidate by that many score units."""
    sb = gp.scenario(rng.getrandbits(32), base_cases, binary, graded)
    sc = gp.scenario(rng.getrandbits(32), cand_cases, binary, graded)
    base = gp.draw_run(sb, rng)
    cand = {f"w2-{cid}": agg for cid, agg in gp.draw_run(sc, rng, drop).items()}
    return base, cand


def unpaired_rate(
    pairs: int, seed: int, alpha: float, drop: float, sizes: tuple[int, int]
) -> tuple[int, float]:
    """(blocked pairs, seconds) for the unpaired gate on ``pairs`` simulated windows."""
    rng = random.Random(seed)
    blocked = 0
    t0 = time.perf_counter()
    for _ in range(pairs):
        base, cand = draw_windows(rng, *sizes, drop=drop)
        blocked += decide_unpaired(base, cand, alpha=alpha).blocked
    return blocked, time.perf_counter() - t0


def paired_rate(pairs: int, seed: int, alpha: float, drop: float, cases: int) -> int:
    """Blocked pairs for the paired gate over the same ``cases`` cases in both runs."""
    sc = gp.scenario(seed, cases)
    rng = random.Random(seed + 1000)
    blocked = 0
    for _ in range(pairs):
        b, c = gp.draw_pair(sc, rng, drop)
        blocked += decide(b, c, alpha=alpha, safety=()).blocked
    return blocked


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--null-only", action="store_true", help="only the no-change rows")
    args = ap.parse_args()
    n = args.pairs
    print(
        f"unpaired gate simulation: {n} pairs per row, 12 pass/fail + 2 graded scorers,"
        f" alpha {args.alpha}, seed {args.seed}; 95% Wilson intervals"
    )
    print(
        f"{'candidate':<26} {'cases b/c':>10} {'paired':>8} {'unpaired':>9}  {'95% interval':>15}"
    )
    rows = [
        ("no change (false blocks)", 0.0, (200, 200)),
        ("no change (false blocks)", 0.0, (100, 400)),
        ("no change (false blocks)", 0.0, (1000, 1000)),
        ("s00 drops 10 points", 0.10, (200, 200)),
        ("s00 drops 10 points", 0.10, (1000, 1000)),
        ("s00 drops 20 points", 0.20, (200, 200)),
        ("s00 drops 20 points", 0.20, (100, 400)),
    ]
    for label, drop, sizes in rows:
        if args.null_only and drop:
            continue
        k, secs = unpaired_rate(n, args.seed, args.alpha, drop, sizes)
        lo, hi = stats.wilson_interval(k, n)
        paired = "–"
        if sizes[0] == sizes[1] and sizes[0] <= 200:
            paired = f"{paired_rate(n, args.seed, args.alpha, drop, sizes[0]) / n:.1%}"
        interval = f"{lo:.1%}–{hi:.1%}"
        print(
            f"{label:<26} {f'{sizes[0]}/{sizes[1]}':>10} {paired:>8} {k / n:>9.1%}"
            f"  {interval:>15}   ({secs:.1f}s)"
        )


if __name__ == "__main__":
    main()
