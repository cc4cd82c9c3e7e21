"""``agenteval report RUN_DIR``: the terminal summary, or the report files asked for.

With no option, the summary is printed. With ``--html/--json/--junit/--markdown FILE``,
each file is written (the HTML report is one self-contained file) and its path printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agenteval.cli._common import console_for
from agenteval.errors import EXIT_OK, InputError
from agenteval.pricing import load_prices
from agenteval.report import render_terminal, summarize, write_json, write_junit, write_markdown
from agenteval.report.html import write_html


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
        "--prices",
        metavar="FILE",
        help="price table (YAML/JSON {model: {input, output}} USD per 1M tokens) used for"
        " the terminal and HTML cost instead of the run's recorded one",
    )
    p.set_defaults(func=run)


def _check_out(path: str) -> Path:
    out = Path(path)
    if out.is_dir():
        raise InputError("is a directory; give a file path", file=out)
    if not out.parent.exists():
        raise InputError("the folder to write into does not exist", file=out)
    return out


def run(args: argparse.Namespace) -> int:
    """Print the summary or write the requested files; 0 on success."""
    console = console_for(args)
    prices = load_prices(args.prices) if args.prices else None
    outputs = [(k, getattr(args, k)) for k in ("html", "json", "junit", "markdown")]
    wanted = [(k, _check_out(v)) for k, v in outputs if v]
    if not wanted:
        render_terminal(summarize(args.run_dir, prices=prices), console)
        return EXIT_OK
    for kind, out in wanted:
        if kind == "html":
            write_html(args.run_dir, out, prices=prices)
        elif kind == "json":
            write_json(args.run_dir, out, prices=prices)
        elif kind == "junit":
            write_junit(args.run_dir, out)
        else:
            write_markdown(args.run_dir, out, prices=prices)
        console.print(f"wrote {kind} report to {out}", markup=False, highlight=False)
    return EXIT_OK
