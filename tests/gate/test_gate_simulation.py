"""The gate's family-wise false-block rate, by simulation (the scenario of bench/gate_power.py).

1,000 no-change pairs: 200 cases, 12 pass/fail and 2 graded scorers, per-case pass
probabilities Beta-distributed, 2% failed trials on average; both runs drawn from the same
probabilities. The gate's decision is called on in-memory case aggregates. The claim
"false-block rate <= alpha" is checked as: the upper end of the 99% Wilson interval of the
observed rate is <= alpha (so a true rate above alpha would fail this test far more often
than not, and a rate comfortably below it passes; the seed is fixed, so it is not flaky).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agenteval.cases.case import Case
from agenteval.gate.paired import decide
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, iter_trials, write_cases
from agenteval.scoring.score import GRADED_THRESHOLD, Score
from agenteval.summary import stats
from agenteval.summary.percase import CaseAggregate, aggregate_cases
from agenteval.trials.trial import Failure, Trial

ALPHA = 0.05
PAIRS = 1000
Z99 = 2.5758293035489


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "gate_power.py"
    spec = importlib.util.spec_from_file_location("gate_power", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gate_power"] = mod
    spec.loader.exec_module(mod)
    return mod


sim = _bench()


@pytest.mark.timeout(900)  # decide() now words every cannot-tell line: slower (issue 26)
def test_no_change_pairs_are_blocked_at_most_alpha_of_the_time() -> None:
    sc = sim.scenario(seed=7)
    rng = random.Random(11)
    blocked = old_blocked = 0
    for i in range(PAIRS):
        base, cand = sim.draw_pair(sc, rng)
        blocked += decide(base, cand, alpha=ALPHA, safety=()).blocked
        if i < 200:  # the 0.1 rule on the same kind of pairs, for contrast
            old_blocked += sim.old_rule_blocks(base, cand, ALPHA)
    rate = blocked / PAIRS
    upper = stats.wilson_interval(blocked, PAIRS, z=Z99)[1]
    assert upper <= ALPHA, f"false-block rate {rate:.3f}, 99% upper bound {upper:.3f}"
    assert old_blocked / 200 > 2 * ALPHA  # what issue 13 saw: about one pair in five


def test_a_twenty_point_drop_on_one_scorer_is_caught() -> None:
    sc = sim.scenario(seed=7)
    rng = random.Random(12)
    caught = 0
    for _ in range(100):
        base, cand = sim.draw_pair(sc, rng, drop=0.20)
        r = decide(base, cand, alpha=ALPHA, safety=())
        caught += r.blocked and any(c.blocks and c.scorer == "s00" for c in r.scorers)
    assert caught >= 90


# ---- the same decision through real run directories and the CLI -----------------------


def _write(run_dir: Path, aggs: Mapping[str, CaseAggregate]) -> Path:
    ids = list(aggs)
    header = RunHeader(
        dataset=DatasetRef(path="d.jsonl", sha256="sim", cases=len(ids)),
        scorers=list(next(iter(aggs.values())).scores),
    )
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=cid, input="q") for cid in ids])
        for cid, agg in aggs.items():
            failed = agg.failed > 0
            trial = Trial(
                case_id=cid,
                output=None if failed else "answer",
                failure=Failure(cause="timeout", message="slow") if failed else None,
            )
            scores = {}
            for name, cs in agg.scores.items():
                if not cs.applicable:
                    scores[name] = Score(None, "agent never answered")
                else:
                    thr = GRADED_THRESHOLD if name.startswith("g") else 1.0
                    scores[name] = Score(cs.total, f"{name} = {cs.total}", threshold=thr)
            w.append(trial, scores)
    return run_dir


def test_end_to_end_pair_through_run_directories_and_the_cli(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    sc = sim.scenario(seed=7)
    base, cand = sim.draw_pair(sc, random.Random(13), drop=0.20)
    b_dir, c_dir = _write(tmp_path / "base", base), _write(tmp_path / "cand", cand)
    in_memory = decide(base, cand, alpha=ALPHA, safety=())
    read_back = decide(
        aggregate_cases(iter_trials(b_dir)), aggregate_cases(iter_trials(c_dir)), safety=()
    )
    assert read_back.model_dump() == in_memory.model_dump()
    out = tmp_path / "verdict.json"
    proc = cli("gate", b_dir, c_dir, "--json", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdict = json.loads(out.read_text())
    assert verdict["verdict"] == "BLOCKED" and verdict["family_size"] == 16
    by_name = {s["scorer"]: s for s in verdict["scorers"]}
    for c in in_memory.scorers:
        assert by_name[c.scorer]["p_adjusted"] == c.p_adjusted
        assert by_name[c.scorer]["blocks"] == c.blocks
    assert by_name["s00"]["blocks"] and "s00 dropped" in proc.stdout
