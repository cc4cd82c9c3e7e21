"""``agenteval rescore RUN_DIR --out NEW_RUN_DIR``: derive every score again.

Reads the observations of an existing run (its trials and its cases snapshot), applies the
scorers again and writes a new run. The original run is never modified and the agent is
never called. Scores the new scorers do not produce (an LLM judge's, say) are carried over
unchanged.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agenteval.case import Case
from agenteval.cli._common import add_scorer_args, build_scorers, console_for, finish_run
from agenteval.errors import InputError
from agenteval.rundir import RunHeader, RunWriter, cases_path, iter_trials, read_header


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
    add_scorer_args(p)
    p.set_defaults(func=run)


def load_run_cases(run_dir: str | Path) -> dict[str, Case]:
    """The cases snapshot of a run, by id."""
    path = cases_path(run_dir)
    cases: dict[str, Case] = {}
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        raise InputError("has no readable cases.jsonl snapshot", file=run_dir) from None
    with f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                try:
                    c = Case.model_validate_json(line)
                except ValueError as e:
                    msg = str(e).splitlines()[0]
                    raise InputError(f"bad case ({msg})", file=path, line=lineno) from None
                cases[c.id] = c
    return cases


def run(args: argparse.Namespace) -> int:
    src = Path(args.run_dir)
    out = Path(args.out)
    if out.resolve() == src.resolve():
        raise InputError("--out must be a new directory; rescore never modifies a run", file=out)
    old = read_header(src)
    cases = load_run_cases(src)
    scorers = build_scorers(args)
    for rec in iter_trials(src):  # validate before writing anything
        if rec.case_id not in cases:
            raise InputError(f"trial for unknown case '{rec.case_id}'", file=src / "trials.jsonl")
    header = RunHeader(
        kind="rescore",
        agent=old.agent,
        dataset=old.dataset,
        scorers=scorers.names,
        prices=old.prices,
        settings=old.settings,
        source_run=str(src),
    )
    with RunWriter.create(out, header) as writer:
        (out / "cases.jsonl").write_bytes(cases_path(src).read_bytes())
        for rec in iter_trials(src):
            scores = scorers.apply(cases[rec.case_id], rec)
            for name, s in rec.scores.items():
                scores.setdefault(name, s)
            writer.append(rec, scores)
        finish_run(writer, console_for(args), show=not args.quiet)
    return 0
