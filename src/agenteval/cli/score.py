"""``agenteval score CASES TRIALS --out RUN_DIR``: score a trial file produced anywhere.

Both files are validated completely before the run directory is created: a bad dataset, a
bad trial file, or a trial whose case is not in the dataset stops the command with exit
code 2 and nothing written. RUN_DIR must be new or empty, and may not be, contain or lie
inside CASES or TRIALS; both are only ever read.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agenteval.cli._common import add_scorer_args, build_scorers, console_for, finish_run
from agenteval.errors import InputError, writing_run


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "score",
        help="score a trial file (from agenteval or from your own logs) against a dataset",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("cases", metavar="CASES", help="the dataset (JSONL, JSON, YAML or CSV)")
    p.add_argument("trials", metavar="TRIALS", help="JSONL file of trials (only case_id required)")
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory to create")
    p.add_argument("--quiet", action="store_true", help="no summary on stdout")
    add_scorer_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported when the command runs: --help starts without the models (~0.4 s of CPU)
    from agenteval._util.gc import frozen_heap
    from agenteval._util.outpaths import check_out_dir
    from agenteval.dataset import iter_cases, load_case_index, scan_dataset
    from agenteval.dataset.trialfile import iter_numbered_trials, iter_trial_file
    from agenteval.rundir import TRIALS, RunHeader, RunWriter, write_cases

    out = Path(args.out)
    check_out_dir(args.out, [("dataset", args.cases), ("trial file", args.trials)])
    ref = scan_dataset(args.cases)
    scorers = build_scorers(args)
    cases = load_case_index(args.cases)
    n = 0
    for lineno, trial in iter_numbered_trials(args.trials):  # validate before writing
        if trial.case_id not in cases:
            raise InputError(
                f"case '{trial.case_id}' is not in {args.cases}",
                file=args.trials,
                line=lineno,
                field="case_id",
            )
        n += 1
    if n == 0:
        raise InputError("holds no trials", file=args.trials)
    header = RunHeader(
        kind="score",
        dataset=ref,
        scorers=scorers.specs,
        settings={"trials_file": str(Path(args.trials))},
    )
    with (
        writing_run(out / TRIALS, "what was written is kept"),
        RunWriter.create(out, header, command="agenteval score") as writer,
    ):
        write_cases(out, iter_cases(args.cases))
        with frozen_heap():
            for trial in iter_trial_file(args.trials):
                writer.append(trial, scorers.apply(cases[trial.case_id], trial))
        finish_run(writer, console_for(args), show=not args.quiet)
    return 0
