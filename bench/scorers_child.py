"""Time ``Scorers.apply`` alone over every trial of a run, in a fresh process (one core).

    python bench/scorers_child.py RUN_DIR

Trials are streamed from the run and the cases loaded from its snapshot; only the calls to
``Scorers.apply`` (every built-in deterministic scorer) are timed, not reading or parsing.
Prints one JSON line: ``{"n", "apply_s", "scorers"}``.
"""

from __future__ import annotations

import json
import sys
import time

from agenteval.rundir import iter_trials
from agenteval.rundir.cases import load_run_cases
from agenteval.scorers import builtin_scorers
from agenteval.scoring.apply import Scorers


def main() -> int:
    run_dir = sys.argv[1]
    cases = load_run_cases(run_dir)
    scorers = Scorers(builtin_scorers())
    n, spent = 0, 0.0
    clock = time.perf_counter
    for trial in iter_trials(run_dir):
        case = cases[trial.case_id]
        t0 = clock()
        scorers.apply(case, trial)
        spent += clock() - t0
        n += 1
    print(json.dumps({"n": n, "apply_s": spent, "scorers": len(scorers)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
