"""The gate's three verdicts by simulation: the share of BLOCKED / PASSED / INCONCLUSIVE
for suite sizes 10-1,000 and true drops of 0-40 points, before (the 0.1-0.3 rule: not
blocked and not underpowered was PASSED) and after (issue 26: PASSED needs evidence).

    python bench/gate_power.py --verdicts [--sims 200] [--seed 3]

One scorer per simulated pair (plus the gate's failed-trial and answered-case checks; no
trial fails), alpha 0.05, allowed drop 0 unless a row says otherwise. Four agents:

- *pass/fail, deterministic*: each case passes or fails for good (80% pass); a true drop of
  d points makes each passing case fail with probability d / 0.8, once and for all.
- *graded, deterministic*: each case has a fixed value (the share of 4 sub-checks, mean
  0.7); a drop of d scales every value by 1 - d / 0.7.
- *pass/fail, 3 repeats, flaky*: each case passes each repeat with its own probability
  (Beta, mean 0.8, concentration 2); a drop scales every probability by 1 - d / 0.8.
- *graded, 3 repeats, flaky*: each repeat's value is the share of 4 sub-checks passed,
  each with the case's probability (Beta, mean 0.7, concentration 2); a drop scales them.

``tests/gate/test_gate_verdict_simulation.py`` imports :func:`draw` and :func:`verdicts`.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable

from agenteval.gate.model import GateResult
from agenteval.gate.paired import decide
from agenteval.summary.percase import CaseAggregate, CaseScore

SIZES = (10, 30, 100, 300, 1000)
DROPS = (0.0, 0.05, 0.10, 0.20, 0.40)
AGENTS = ("pass/fail, deterministic", "graded, deterministic",
          "pass/fail, 3 repeats, flaky", "graded, 3 repeats, flaky")  # fmt: skip


def _beta(rng: random.Random, mean: float, k: float = 2.0) -> float:
    return rng.betavariate(mean * k, (1 - mean) * k)


def _case(values: list[float], binary: bool) -> CaseAggregate:
    n = len(values)
    agg = CaseAggregate(trials=n, failed=0, answered=n)
    passed = sum(v >= (1.0 if binary else 0.5) for v in values)
    agg.scores["s"] = CaseScore(applicable=n, passed=passed, total=sum(values), binary=binary)
    return agg


def draw(
    agent: str, n: int, drop: float, rng: random.Random
) -> tuple[dict[str, CaseAggregate], dict[str, CaseAggregate]]:
    """A baseline and a candidate run of ``agent`` on ``n`` cases, the candidate ``drop``
    points worse in expectation (see the module docstring)."""
    base: dict[str, CaseAggregate] = {}
    cand: dict[str, CaseAggregate] = {}
    for i in range(n):
        cid = f"c{i:04d}"
        if agent == "pass/fail, deterministic":
            ok = rng.random() < 0.8
            worse = ok and rng.random() < drop / 0.8
            base[cid], cand[cid] = _case([float(ok)], True), _case([float(ok and not worse)], True)
        elif agent == "graded, deterministic":
            v = sum(rng.random() < 0.7 for _ in range(4)) / 4
            base[cid], cand[cid] = _case([v], False), _case([v * (1 - drop / 0.7)], False)
        elif agent == "pass/fail, 3 repeats, flaky":
            p = _beta(rng, 0.8)
            q = p * (1 - drop / 0.8)
            b = [float(rng.random() < p) for _ in range(3)]
            c = [float(rng.random() < q) for _ in range(3)]
            base[cid], cand[cid] = _case(b, True), _case(c, True)
        else:
            p = _beta(rng, 0.7)
            q = p * (1 - drop / 0.7)
            b = [sum(rng.random() < p for _ in range(4)) / 4 for _ in range(3)]
            c = [sum(rng.random() < q for _ in range(4)) / 4 for _ in range(3)]
            base[cid], cand[cid] = _case(b, False), _case(c, False)
    return base, cand


def before(r: GateResult) -> str:
    """The verdict of the rule before issue 26 (same blocking rules)."""
    if r.blocked:
        return "BLOCKED"
    return "UNDERPOWERED" if r.underpowered else "PASSED"


def verdicts(
    agent: str, n: int, drop: float, sims: int, seed: int, max_drop: float = 0.0
) -> tuple[Counter[str], Counter[str]]:
    """(after, before) verdict counts over ``sims`` simulated pairs."""
    rng = random.Random(f"{agent}|{n}|{drop}|{seed}")  # a str seed: the same in every process
    after: Counter[str] = Counter()
    old: Counter[str] = Counter()
    drops = {"s": max_drop} if max_drop else None
    for _ in range(sims):
        b, c = draw(agent, n, drop, rng)
        r = decide(b, c, alpha=0.05, safety=(), max_drop=drops)
        after[r.verdict] += 1
        old[before(r)] += 1
    return after, old


ROWS = [(a, 0.0) for a in AGENTS] + [(a, 0.05) for a in AGENTS if "flaky" in a]
"""(agent, allowed drop): every agent with the default 0, the flaky ones also with 5 pts."""


def _shares(c: Counter[str], k: int, names: tuple[str, ...]) -> str:
    return " / ".join(f"{100 * c[v] / k:.0f}" for v in names)


def table(sims: int, seed: int, out: Callable[[str], None] = print) -> None:
    """The Markdown table of docs/reports.md: per cell, after and before, in percent."""
    big = max(20, sims // 4)
    out(f"{sims} simulated pairs per cell ({big} at 1,000 cases), alpha 0.05, seed {seed}.")
    out("after: % BLOCKED / PASSED / INCONCLUSIVE; before: % BLOCKED / PASSED / UNDERPOWERED")
    out("")
    out("| agent | allowed drop | cases | true drop (pts) | after B / P / I | before B / P / U |")
    out("|---|---:|---:|---:|---|---|")
    t0 = time.perf_counter()
    for agent, margin in ROWS:
        for n in SIZES:
            k = sims if n < 1000 else big
            for d in DROPS:
                a, o = verdicts(agent, n, d, k, seed, margin)
                after = _shares(a, k, ("BLOCKED", "PASSED", "INCONCLUSIVE"))
                old = _shares(o, k, ("BLOCKED", "PASSED", "UNDERPOWERED"))
                out(f"| {agent} | {100 * margin:.0f} | {n} | {100 * d:.0f} | {after} | {old} |")
    out(f"\n({time.perf_counter() - t0:.0f} s)")
