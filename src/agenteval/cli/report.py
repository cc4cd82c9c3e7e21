"""``agenteval report RUN_DIR``: the terminal summary, or the report files asked for.

With no option, the summary is printed. With ``--html/--json/--junit/--markdown FILE``,
each file is written (the HTML report is one self-contained file) and its path printed.
A report file may not be the run directory, one of its own files (run.json, cases.jsonl,
trials.jsonl, run.lock), the price table, or the same file as another report: each is
refused with exit code 2 before anything is written.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agenteval.cli._common import console_for
from agenteval.errors import EXIT_OK


def register(sub: Any) -> None:
    """Add the ``report`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "report",
        help="summarise a run, or write it as HTML / JSON / JUnit XML / Markdown",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory")
    p.add_argument("--html", metavar="FILE", help="write the self-contained HTML report")
    p.add_argument("--json", metavar="FILE", help="write the summary as JSON")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (case × scorer)")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (PR comment)")
    p.add_argument(
        "--all-scorers",
        action="store_true",
        help="list every scorer in the terminal table, also those that applied to no trial",
    )
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="price table (YAML/JSON {model: {input, output}} USD per 1M tokens) used for"
        " the terminal and HTML cost instead of the run's recorded one",
    )
    p.set_defaults(func=run)


def warn_if_being_written(run_dir: str) -> None:
    """One line on stderr when another process holds the run's lock (the report goes on,
    over the trials written so far): ``agenteval: warning: run runs/x is still being written
    (pid 123, 'agenteval run', started ...); this report covers the 7 trials written so far``."""
    # imported when the command runs: --help starts without the run modules
    from agenteval.rundir import iter_trials
    from agenteval.rundir.lock import RunLock

    holder = RunLock.holder(run_dir)
    if holder is None:
        return
    n = sum(1 for _ in iter_trials(run_dir))
    print(
        f"agenteval: warning: run {run_dir} is still being written ({holder});"
        f" this report covers the {n} trials written so far",
        file=sys.stderr,
    )


def run(args: argparse.Namespace) -> int:
    """Print the summary or write the requested files; 0 on success."""
    # imported when the command runs, and each renderer only when its output is asked for:
    # the HTML one (jinja2) and the Markdown one (the gate's models): report RUN 0.74 -> 0.58 s
    from agenteval._util.outpaths import check_out_files
    from agenteval.llm.pricing import load_prices
    from agenteval.rundir import RUN_FILES

    console = console_for(args)
    prices = load_prices(args.prices) if args.prices else None
    outputs = [(k, getattr(args, k)) for k in ("html", "json", "junit", "markdown")]
    given = [(k, v) for k, v in outputs if v]
    checked = check_out_files(
        [(f"--{k}", v) for k, v in given],
        [("run", args.run_dir), ("price table", args.prices)],
        protected_dir=args.run_dir,
        protected_names=RUN_FILES,
        renamed=("--html",),  # written to FILE.tmp, then renamed over FILE
    )
    wanted = [(k, out) for (k, _), out in zip(given, checked, strict=True)]
    warn_if_being_written(args.run_dir)
    if not wanted:
        # (see above: the terminal renderer imported on first use)
        from agenteval.report.terminal import render_terminal
        from agenteval.summary.compute import summarize

        summary = summarize(args.run_dir, prices=prices)
        render_terminal(summary, console, all_scorers=args.all_scorers)
        return EXIT_OK
    for kind, out in wanted:
        if kind == "html":
            from agenteval.report.html import write_html  # (start-up: on first use)

            write_html(args.run_dir, out, prices=prices)
        elif kind == "json":
            from agenteval.summary.compute import write_json  # (start-up: on first use)

            write_json(args.run_dir, out, prices=prices)
        elif kind == "junit":
            from agenteval.report.junit import write_junit  # (start-up: on first use)

            write_junit(args.run_dir, out)
        else:
            from agenteval.report.markdown import write_markdown  # (start-up: on first use)

            write_markdown(args.run_dir, out, prices=prices)
        console.print(f"wrote {kind} report to {out}", markup=False, highlight=False)
    return EXIT_OK
