"""The gate's false-block rate and power, before (0.1's rule) and after (Holm), by simulation.

    python bench/gate_power.py [--pairs 2000] [--seed 1] [--alpha 0.05]
    python bench/gate_power.py --verdicts [--sims 100] [--seed 1]   # issue 26's table

Each simulated pair is a baseline and a candidate run over the same 200 cases with 12
pass/fail and 2 graded scorers. Every case has its own pass probability per scorer,
Beta-distributed around a scorer mean between 0.55 and 0.95 (some scorers nearly
deterministic per case, some flaky), its own chance of a failed trial (mean 2%; a failed
trial has no answer and no applicable score), and a graded value that is the share of 4
sub-checks passed. Both runs are drawn independently from the same probabilities, except
that for the power rows the candidate's pass probabilities on ``s00`` (mean 0.8) are
scaled down so that its expected pass rate drops by 10 or 20 points.

*before* is 0.1's rule, reimplemented here: each scorer on its own, a two-sided test
(McNemar / sign-flip permutation) at alpha and a drop; plus more failed trials at alpha.
*after* is :func:`agenteval.gate.paired.decide`, called on in-memory case aggregates.
``tests/test_gate_simulation.py`` imports :func:`scenario` and :func:`draw_pair` from here.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agenteval.gate.paired import decide
from agenteval.summary import stats
from agenteval.summary.percase import CaseAggregate, CaseScore

GRADED_THRESHOLD = 0.5


@dataclass(frozen=True)
class Scenario:
    """Per-case probabilities: ``binary[j][i]``, ``graded[j][i]``, ``fail[i]``."""

    binary: list[list[float]]
    graded: list[list[float]]
    fail: list[float]


def _beta(rng: random.Random, mean: float, concentration: float) -> float:
    return rng.betavariate(mean * concentration, (1 - mean) * concentration)


def scenario(
    seed: int = 1, cases: int = 200, binary: int = 12, graded: int = 2, fail_rate: bool = True
) -> Scenario:
    """Per-case probabilities, varied by scorer (means 0.55-0.95, concentrations 0.5-5)."""
    rng = random.Random(seed)
    kappas = (0.5, 1.0, 2.0, 5.0)
    means = [0.8] + [0.55 + 0.4 * j / max(1, binary - 2) for j in range(binary - 1)]
    bin_p = [
        [_beta(rng, means[j], kappas[j % len(kappas)]) for _ in range(cases)] for j in range(binary)
    ]
    gr_p = [[_beta(rng, 0.7, kappas[j % len(kappas)]) for _ in range(cases)] for j in range(graded)]
    fail = [rng.betavariate(0.3, 15) if fail_rate else 0.0 for _ in range(cases)]
    return Scenario(bin_p, gr_p, fail)


def draw_run(
    sc: Scenario, rng: random.Random, drop: float = 0.0, dropped: int = 0
) -> dict[str, CaseAggregate]:
    """One run: per case one trial; ``drop`` lowers scorer ``s{dropped}``'s expected pass
    rate by that many score units (its per-case probabilities scaled down)."""
    scale = 1.0
    if drop:
        probs = sc.binary[dropped]
        scale = 1 - drop / (sum(probs) / len(probs))
    # the gate never changes a CaseScore, so equal ones are shared (drawing is the slow part)
    na, passed, failed_ = _na, _passed, _failed
    graded_scores = _graded
    out: dict[str, CaseAggregate] = {}
    rand = rng.random
    bin_names = [f"s{j:02d}" for j in range(len(sc.binary))]
    gr_names = [f"g{j:02d}" for j in range(len(sc.graded))]
    for i, fail_p in enumerate(sc.fail):
        failed = rand() < fail_p
        agg = CaseAggregate(trials=1, failed=int(failed), answered=int(not failed))
        scores = agg.scores
        if failed:
            for name in bin_names + gr_names:
                scores[name] = na
            out[f"c{i:03d}"] = agg
            continue
        for j, probs in enumerate(sc.binary):
            p = probs[i] * scale if j == dropped else probs[i]
            scores[bin_names[j]] = passed if rand() < p else failed_
        for j, probs in enumerate(sc.graded):
            q = probs[i]
            scores[gr_names[j]] = graded_scores[sum(rand() < q for _ in range(4))]
        out[f"c{i:03d}"] = agg
    return out


_na = CaseScore(not_applicable=1)
_passed = CaseScore(applicable=1, passed=1, total=1.0)
_failed = CaseScore(applicable=1, passed=0, total=0.0)
_graded = [
    CaseScore(applicable=1, passed=int(k / 4 >= GRADED_THRESHOLD), total=k / 4, binary=k in (0, 4))
    for k in range(5)
]


def draw_pair(
    sc: Scenario, rng: random.Random, drop: float = 0.0
) -> tuple[dict[str, CaseAggregate], dict[str, CaseAggregate]]:
    """A baseline and a candidate; ``drop`` > 0 lowers ``s00`` in the candidate."""
    return draw_run(sc, rng), draw_run(sc, rng, drop)


def old_rule_blocks(
    base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate], alpha: float
) -> bool:
    """0.1's decision: any scorer (two-sided test at alpha, with a drop) or more failed
    trials (two-sided McNemar at alpha) blocks; no multiplicity correction."""
    shared = [c for c in base if c in cand]
    names = dict.fromkeys(n for a in base.values() for n in a.scores)
    for name in names:
        pairs = [
            (b, c)
            for cid in shared
            if (b := base[cid].scores.get(name)) is not None
            and (c := cand[cid].scores.get(name)) is not None
            and b.applicable
            and c.applicable
        ]
        if not pairs:
            continue
        if all(b.binary and c.binary for b, c in pairs):
            worse = sum(bool(b.all_passed) and not c.all_passed for b, c in pairs)
            better = sum(not b.all_passed and bool(c.all_passed) for b, c in pairs)
            if worse > better and stats.mcnemar_exact(worse, better) < alpha:
                return True
        else:
            diffs = [(c.mean or 0.0) - (b.mean or 0.0) for b, c in pairs]
            if sum(diffs) < 0 and stats.paired_permutation(diffs).p_value < alpha:
                return True
    new = sum(cand[c].any_failed and not base[c].any_failed for c in shared)
    rec = sum(base[c].any_failed and not cand[c].any_failed for c in shared)
    return new > rec and stats.mcnemar_exact(new, rec) < alpha


def new_rule_blocks(
    base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate], alpha: float
) -> bool:
    """The gate's decision today (no safety scorer in these runs)."""
    return decide(base, cand, alpha=alpha, safety=()).blocked


def measure(pairs: int, seed: int, alpha: float, drop: float) -> tuple[float, float, float]:
    """Block rates (before, after) over ``pairs`` simulated pairs, and seconds taken."""
    sc = scenario(seed)
    rng = random.Random(seed + 1000)
    old = new = 0
    t0 = time.perf_counter()
    for _ in range(pairs):
        b, c = draw_pair(sc, rng, drop)
        old += old_rule_blocks(b, c, alpha)
        new += new_rule_blocks(b, c, alpha)
    return old / pairs, new / pairs, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument(
        "--verdicts",
        action="store_true",
        help="the three verdicts by suite size and true drop (bench/gate_power_verdicts.py)",
    )
    ap.add_argument("--sims", type=int, default=100, help="--verdicts: pairs per cell")
    args = ap.parse_args()
    if args.verdicts:
        sys.path.insert(0, str(Path(__file__).parent))
        from gate_power_verdicts import table

        table(args.sims, args.seed)
        return
    print(
        f"gate simulation: {args.pairs} pairs per row, 200 cases, 12 pass/fail + 2 graded"
        f" scorers, alpha {args.alpha}, seed {args.seed}"
    )
    print(f"{'candidate':<28} {'before (0.1)':>14} {'after (Holm)':>14}  {'± (1 SE)':>9}")
    for label, drop in (
        ("no change (false blocks)", 0.0),
        ("s00 drops 10 points", 0.10),
        ("s00 drops 20 points", 0.20),
    ):
        old, new, secs = measure(args.pairs, args.seed, args.alpha, drop)
        se = math.sqrt(max(new * (1 - new), 1e-12) / args.pairs)
        print(f"{label:<28} {old:>14.1%} {new:>14.1%}  {se:>9.1%}   ({secs:.1f}s)")


if __name__ == "__main__":
    main()
