"""``agenteval rescore RUN_DIR --out NEW_RUN_DIR``: derive every score again.

Reads the observations of an existing run (its trials and its cases snapshot), applies the
scorers again and writes a new run. The original run is never modified and the agent is
never called.

The scorers are the ones the run recorded in run.json, rebuilt with their recorded
settings (suite tool definitions, PII kinds). Custom scorers recorded by import path are
imported again only with --trust-run, because importing a module that run.json names runs
code and a run may come from someone else; without it their stored scores are kept. The
options override the recorded scorers: --no-builtin-scorers keeps the built-in scorers'
stored scores instead of recomputing them; --tool-defs and --pii-kinds replace the recorded
settings of tool_arguments_valid/tool_execution and pii_leakage; --scorer MODULE:FN adds a
scorer, or replaces the recorded one of the same name. A run that recorded no scorer gets
the built-in ones. Scores the new scorers do not produce (an LLM judge's, a scorer whose
import path was not recorded or not trusted) are carried over unchanged.

--tag, --where, --cases/--cases-file and --sample rescore only the selected cases of the run
(docs/selection.md): the new run holds those cases and their trials, and records the
selection in run.json (a selection of a selection keeps the first under
``selection.within``).

--processes N (or --executor ray) scores on worker processes and writes the same lines;
exit code 6 when every worker was lost (the new run is removed); not with a selection.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.cli._common import (
    add_scorer_args,
    console_for,
    finish_run,
    flagged,
    live_summary,
    scorer_overrides,
)
from agenteval.cli._executor_args import executor_from_args
from agenteval.cli._selection_args import (
    add_selection_args,
    select_run_cases,
    selection_from_args,
)
from agenteval.errors import InputError, writing_run

if TYPE_CHECKING:  # the parser is built without the models (start-up)
    from agenteval.cases.case import Case
    from agenteval.rundir import RunWriter
    from agenteval.rundir.cases import RunCases
    from agenteval.scoring.apply import Scorers


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "rescore",
        help="recompute every score of a run into a new run, without calling the agent",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run to rescore (left untouched)")
    p.add_argument("--out", required=True, metavar="NEW_RUN_DIR", help="run directory to create")
    p.add_argument("--quiet", action="store_true", help="no summary on stdout")
    p.add_argument(
        "--trust-run",
        action="store_true",
        help="import the custom scorers run.json names (module:fn) and recompute them;"
        " this runs code the run file names: only for runs you trust",
    )
    add_selection_args(p)
    add_scorer_args(p)
    # imported when this command runs: the other commands start without it
    from agenteval.cli._executor_args import add_executor_args

    add_executor_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported when the command runs: --help starts without the models (start-up)
    from agenteval._util.outpaths import check_out_dir
    from agenteval.dataset import canonical_case_json
    from agenteval.rundir import CASES, HEADER, TRIALS, RunHeader, RunWriter, read_header
    from agenteval.rundir.cases import RunCases, load_run_cases
    from agenteval.rundir.lock import refuse_if_being_written
    from agenteval.scorers.config import rebuild_scorers
    from agenteval.summary.sources import SnapshotIndex

    src = Path(args.run_dir)
    out = Path(args.out)
    check_out_dir(args.out, [("source run", args.run_dir)])  # rescore never modifies its source
    refuse_if_being_written(src, "agenteval rescore")  # a copy of it would look whole
    old = read_header(src)
    overrides = dataclasses.replace(scorer_overrides(args), trust_refs=args.trust_run)
    rebuilt = rebuild_scorers(old.scorers, overrides, where=str(src / HEADER))
    for note in rebuilt.notes:
        print(f"agenteval: rescore: {flagged(note)}", file=sys.stderr, flush=True)
    scorers = rebuilt.scorers
    sel = selection_from_args(args)
    keep: list[Case] | None = None
    settings = old.settings
    if sel is not None:
        keep, settings = select_run_cases(
            sel,
            load_run_cases(src, trust_code=args.trust_run),
            old,
            parallel=executor_from_args(args) is not None,
        )
    # the summary's tags and case order, gathered as the snapshot is indexed: it is copied
    # as is (without a selection), so the new run's snapshot is not read twice more
    index = SnapshotIndex() if keep is None else None
    cases = RunCases(src, trust_code=args.trust_run, on_index=index.add if index else None)
    try:
        header = RunHeader(
            kind="rescore",
            agent=old.agent,
            dataset=old.dataset,
            scorers=rebuilt.specs,
            prices=old.prices,
            settings=settings,
            source_run=str(src),
        )
        created = not out.exists()
        with writing_run(out / TRIALS, "the new run was removed: rescore again"):
            writer = RunWriter.create(out, header, command="agenteval rescore", buffered=True)
            try:
                with writer:
                    if keep is None:
                        shutil.copyfile(cases.path, out / CASES)
                    else:
                        (out / CASES).write_text(
                            "".join(canonical_case_json(c) + "\n" for c in keep),
                            encoding="utf-8",
                        )
                    executor = executor_from_args(args)
                    if executor is None:
                        live = live_summary(writer, index)
                        ids = None if keep is None else {c.id for c in keep}
                        _rescore(src, writer, cases, scorers, ids)
                    else:  # workers score and say what each trial adds to the summary
                        # imported when this command runs: the other commands start without it
                        from agenteval.cli.rescore_parallel import rescore_parallel

                        live = live_summary(writer, index)
                        if live.contribution_args() is None:
                            live = None  # no correctness scorer named: read the new run back
                        seen = rescore_parallel(
                            src, writer, scorers, executor, live, trust_code=args.trust_run
                        )
                        cases.check_rest(seen=seen)
                    finish_run(writer, console_for(args), show=not args.quiet, live=live)
            except BaseException:
                _remove_new_run(out, created)
                raise
    finally:
        cases.close()
    return 0


def _rescore(
    src: Path, writer: RunWriter, cases: RunCases, scorers: Scorers, ids: set[str] | None
) -> None:
    """One pass: each trial is checked, scored and written (only those of the cases ``ids``
    when given); bad input raises InputError."""
    # imported when the command runs (start-up)
    from agenteval._util.gc import frozen_heap
    from agenteval.rundir import TRIALS, iter_trials

    trials_file = src / TRIALS
    apply, append, get = scorers.apply, writer.append, cases.get
    with frozen_heap():
        for rec in iter_trials(src):
            if rec.case_id not in cases:
                raise InputError(f"trial for unknown case '{rec.case_id}'", file=trials_file)
            if ids is not None and rec.case_id not in ids:
                continue
            scores = apply(get(rec.case_id), rec)
            for name, s in rec.scores.items():
                scores.setdefault(name, s)
            append(rec, scores)
    cases.check_rest()


def _remove_new_run(out: Path, created: bool) -> None:
    """Undo a failed rescore: the whole directory if it made it, else the files it wrote."""
    from agenteval.rundir import CASES, HEADER, TRIALS  # (start-up: on first use)

    if created:
        shutil.rmtree(out, ignore_errors=True)
        return
    for name in (HEADER, HEADER + ".tmp", TRIALS, CASES):
        (out / name).unlink(missing_ok=True)
