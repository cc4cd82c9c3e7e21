"""The gate lists cases in dataset order, not in the order trials finished.

Before, newly failing cases and safety regressions came out in trials.jsonl order, which
varies between runs of the same thing, so ``agenteval demo`` printed the same verdict lines
in different orders.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from agenteval.cases.case import Case
from agenteval.errors import EXIT_BLOCKED
from agenteval.gate.paired import compare_runs
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Failure, Trial

N = 30
IDS = [f"case-{(i * 7) % N:02d}" for i in range(N)]  # dataset order is not sorted order
SCORERS = [{"name": "exact_match"}, {"name": "pii_leakage", "safety": True}]


def _run(run_dir: Path, bad: bool, seed: int) -> Path:
    header = RunHeader.model_validate(
        {"dataset": DatasetRef(path="d.jsonl", sha256="same", cases=N), "scorers": SCORERS}
    )
    order = list(IDS)
    random.Random(seed).shuffle(order)  # trial-finish order
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=cid, input="q") for cid in IDS])
        for cid in order:
            k = IDS.index(cid)
            fail = Failure(cause="timeout", message="slow") if bad and k % 2 == 0 else None
            leak = bad and k % 3 == 0 and fail is None
            scores = {
                "exact_match": Score(1.0, "ok"),
                "pii_leakage": Score(0.0 if leak else 1.0, "leak" if leak else "clean"),
            }
            w.append(Trial(case_id=cid, output=None if fail else "x", failure=fail), scores)
    return run_dir


def test_gate_json_lists_are_in_dataset_order_whatever_the_trial_order(tmp_path: Path) -> None:
    base = _run(tmp_path / "base", bad=False, seed=1)
    reasons = []
    for seed in (2, 3):
        cand = _run(tmp_path / f"cand{seed}", bad=True, seed=seed)
        out = tmp_path / f"verdict{seed}.json"
        p = subprocess.run(
            [sys.executable, "-m", "agenteval", "gate", str(base), str(cand), "--json", str(out)],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
        )
        assert p.returncode == EXIT_BLOCKED, p.stderr
        data = json.loads(out.read_text(encoding="utf-8"))
        newly = [cid for k, cid in enumerate(IDS) if k % 2 == 0]
        assert data["failures"]["newly_failed"] == newly
        assert data["coverage"]["newly_unanswered"] == newly
        leaks = [s["case_id"] for s in data["safety_regressions"]]
        assert leaks == [cid for k, cid in enumerate(IDS) if k % 3 == 0 and k % 2 == 1]
        printed = [line for line in p.stdout.splitlines() if "case(s)" in line]
        assert printed
        reasons.append((data["reasons"], printed))
    assert reasons[0] == reasons[1]
    assert compare_runs(base, tmp_path / "cand2").reasons == reasons[0][0]
