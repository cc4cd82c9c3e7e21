"""``agenteval gate BASELINE CANDIDATE`` and ``agenteval compare RUN_A RUN_B ...``.

``gate`` compares two runs case by case and gives one of three verdicts. BLOCKED, exit 1:
the candidate must not ship (a new safety failure; a significant drop beyond the allowed
one; significantly more failed trials; significantly fewer answered cases, or none;
baseline cases missing from the candidate without --allow-dataset-change; a policy:
--require, --no-new-failures, a scorer declared must_not_regress). PASSED, exit 0: nothing
blocks and there is evidence that nothing got worse beyond its allowed drop (on every
scorer, failed trials and answered cases, no case got worse, or the 95% upper bound on
the drop is within --max-drop). INCONCLUSIVE, exit 3 (0 with --allow-inconclusive):
neither; the output says per scorer what was seen, why it cannot tell, and roughly how
many cases would settle it. Exit 2 for unusable input (e.g. runs over different datasets without
--allow-dataset-change, or a --json/--markdown path that is a directory, has no existing
folder, or is one of either run's own files) and 5 when --json or --markdown cannot be
written. Outputs are written before the verdict is printed.

Runs that share no case id (two windows of production traffic) are compared as two
independent samples, and the output says so: two-sample tests per scorer, the same Holm
family and exit codes, a safety rule on failure rates, and a minimum detectable drop at 80%
power (exit 3 when no scorer could detect even a drop to 0). --unpaired forces this for
runs that share cases; --paired refuses runs that share none (exit 2).
``compare`` prints the runs' headline numbers side by side and never gates."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agenteval._util.outpaths import check_out_files
from agenteval.cli._common import console_for
from agenteval.errors import EXIT_IO, EXIT_OK, InputError
from agenteval.gate.paired import compare_runs
from agenteval.gate.policies import parse_require
from agenteval.report import summarize
from agenteval.report.gate_text import render_gate
from agenteval.report.markdown import render_gate_markdown
from agenteval.report.terminal import fmt_num, fmt_rate, fmt_s, fmt_usd, safe
from agenteval.rundir import RUN_FILES
from agenteval.summary.model import Summary

__all__ = ["parse_max_drop", "register", "render_comparison", "render_gate", "run_gate"]


def register(sub: Any) -> None:
    """Add the ``gate`` and ``compare`` subcommands."""
    g: argparse.ArgumentParser = sub.add_parser(
        "gate",
        help="block a candidate run that regressed against a baseline (exit 1)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.add_argument("baseline", metavar="BASELINE_RUN")
    g.add_argument("candidate", metavar="CANDIDATE_RUN")
    g.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="family-wise significance level over all the gate's tests (0.05)",
    )
    g.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="SCORER=VALUE",
        help="allowed drop for a scorer, in score units (0.05 = 5 points); default 0;"
        " repeat the option for several scorers",
    )
    g.add_argument(
        "--allow-dataset-change",
        action="store_true",
        help="compare runs over different datasets, or a candidate missing baseline"
        " cases, on the case ids they share",
    )
    g.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="SCORER>=X",
        help="block unless the candidate's share of cases passing SCORER (graded: its mean)"
        " is at least X, e.g. exact_match>=0.9; repeat the option for several scorers",
    )
    g.add_argument(
        "--no-new-failures",
        nargs="?",
        const="",
        default=None,
        metavar="SCORER,...",
        help="block on any case that newly fails the named scorers (all compared scorers"
        " when none is named); with repeats a case newly fails when it passed every repeat"
        " in the baseline and fails a majority of them in the candidate (paired runs only)",
    )
    g.add_argument(
        "--allow-inconclusive",
        "--allow-underpowered",
        dest="allow_underpowered",
        action="store_true",
        help="exit 0 instead of 3 when the verdict is INCONCLUSIVE (it is still printed)",
    )
    pairing = g.add_mutually_exclusive_group()
    pairing.add_argument(
        "--unpaired",
        dest="mode",
        action="store_const",
        const="unpaired",
        default="auto",
        help="compare the runs as two independent samples of cases (two-sample tests),"
        " shared case ids or not; automatic when they share no case id",
    )
    pairing.add_argument(
        "--paired",
        dest="mode",
        action="store_const",
        const="paired",
        help="always pair cases by id: runs that share no case id are an input error"
        " (exit 2) instead of an unpaired comparison",
    )
    g.add_argument("--json", metavar="FILE", help="also write the verdict as JSON")
    g.add_argument("--markdown", metavar="FILE", help="also write a pull-request comment")
    g.set_defaults(func=run_gate)

    c: argparse.ArgumentParser = sub.add_parser(
        "compare", help="print runs side by side (no gating)", description=__doc__
    )
    c.add_argument("runs", metavar="RUN", nargs="+", help="two or more run directories")
    c.set_defaults(func=run_compare)


def parse_max_drop(items: list[str]) -> dict[str, float]:
    """``["exact_match=0.05", ...]`` → ``{"exact_match": 0.05}``; InputError when malformed."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = float(value)
        except ValueError:
            raise InputError(
                f"--max-drop expects SCORER=VALUE (e.g. exact_match=0.05), got {item!r}"
            ) from None
    return out


def run_gate(args: argparse.Namespace) -> int:
    """Compare, write --json/--markdown, then print the verdict; return the exit code."""
    outs = [(o, p) for o, p in (("--json", args.json), ("--markdown", args.markdown)) if p]
    runs = [("baseline run", args.baseline), ("candidate run", args.candidate)]
    for _, run_dir in runs:  # never onto either run's own files, nor onto a run
        check_out_files(outs, runs, protected_dir=run_dir, protected_names=RUN_FILES)
    result = compare_runs(
        args.baseline,
        args.candidate,
        alpha=args.alpha,
        max_drop=parse_max_drop(args.max_drop),
        allow_dataset_change=args.allow_dataset_change,
        allow_underpowered=args.allow_underpowered,
        mode=args.mode,
        require=parse_require(args.require),
        no_new_failures=None
        if args.no_new_failures is None
        else [n.strip() for n in args.no_new_failures.split(",") if n.strip()],
    )
    outputs: list[tuple[str, str, str]] = []
    if args.json:
        worse = {c.scorer: c.got_worse for c in result.scorers if c.got_worse}
        first = {"verdict": result.verdict, "got_worse": worse}  # what got worse leads
        text = json.dumps({**first, **result.model_dump(mode="json")}, indent=2)
        outputs.append(("--json", args.json, text + "\n"))
    if args.markdown:
        outputs.append(("--markdown", args.markdown, render_gate_markdown(result)))
    for option, path, text in outputs:
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as e:
            print(
                f"agenteval: error: {option} {path}: cannot write ({e.strerror or e});"
                " no verdict was given",
                file=sys.stderr,
            )
            return EXIT_IO
    render_gate(result, console_for(args))
    return result.exit_code


def run_compare(args: argparse.Namespace) -> int:
    """Print the runs side by side; always 0 for readable runs."""
    if len(args.runs) < 2:
        raise InputError("compare needs at least two run directories")
    summaries = [summarize(d) for d in args.runs]
    labels = [Path(d).name or str(d) for d in args.runs]
    if len(set(labels)) < len(labels):
        labels = [str(d) for d in args.runs]
    render_comparison(labels, summaries, console_for(args))
    return EXIT_OK


def render_comparison(labels: list[str], summaries: list[Summary], console: Console) -> None:
    """A table with one column per run: counts, per-scorer rates/means, latency and cost."""
    t = Table(title="Runs side by side", title_justify="left")
    t.add_column("")
    for label in labels:
        t.add_column(safe(label, 30), justify="right")

    def row(name: str | Text, values: list[str]) -> None:
        t.add_row(name, *values)

    row("trials", [str(s.trials) for s in summaries])
    row("cases", [str(s.cases) for s in summaries])
    row("answered", [str(s.answered) for s in summaries])
    row("failed trials", [str(s.failed) for s in summaries])
    names = list(dict.fromkeys(n for s in summaries for n in s.scorers))
    for n in names:
        cells = []
        for s in summaries:
            ss = s.scorers.get(n)
            if ss is None:
                cells.append("–")
            elif ss.binary:
                cells.append(f"{fmt_rate(ss.pass_rate)} (n={ss.applicable})")
            else:
                cells.append(f"{fmt_num(ss.mean)} (n={ss.applicable})")
        row(safe(n, 40), cells)
    row("latency p50", [fmt_s(s.latency.total.p50) for s in summaries])
    row("latency p95", [fmt_s(s.latency.total.p95) for s in summaries])
    row("cost total", [fmt_usd(s.cost.total_usd) for s in summaries])
    row("cost per correct", [fmt_usd(s.cost.per_correct_usd) for s in summaries])
    console.print(t)
    console.print(
        Text("pass/fail scorers show the pass rate, graded ones the mean; no test is run.")
    )
