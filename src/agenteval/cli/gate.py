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
A run made with a case selection (``--tag``, ``--where``, ``--cases``, ``--sample``:
``settings.selection`` in run.json) is said so before the verdict, and the gate compares
that selection: cases are paired by id, so only the cases both runs have are compared, and
a baseline's cases that a selected candidate (same dataset) did not select are left out
rather than counted missing; a selected case with no trial in the candidate still blocks
as missing (docs/selection.md).

``compare`` prints the runs' headline numbers side by side (each scorer's pass rate or mean
with its 95% interval) and never gates."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.cli._common import console_for
from agenteval.errors import EXIT_IO, EXIT_OK, InputError

if TYPE_CHECKING:  # the parsers are built without the gate and report modules (start-up)
    from rich.console import Console
    from rich.text import Text

    from agenteval.gate.paired import GateResult
    from agenteval.summary.model import ScorerSummary, Summary

__all__ = [
    "gate_runs",
    "parse_max_drop",
    "register",
    "render_comparison",
    "run_gate",
]


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
    # imported when the command runs: --help starts without the gate and report modules
    from agenteval._util.outpaths import check_out_files
    from agenteval.gate.policies import parse_require
    from agenteval.report.gate_text import render_gate
    from agenteval.report.markdown import render_gate_markdown
    from agenteval.rundir import RUN_FILES

    outs = [(o, p) for o, p in (("--json", args.json), ("--markdown", args.markdown)) if p]
    runs = [("baseline run", args.baseline), ("candidate run", args.candidate)]
    for _, run_dir in runs:  # never onto either run's own files, nor onto a run
        check_out_files(outs, runs, protected_dir=run_dir, protected_names=RUN_FILES)
    result, notes = gate_runs(
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
        text = json.dumps(result.json_document(), indent=2)
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
    console = console_for(args)
    for line in notes:
        console.print(line, markup=False, highlight=False)
    render_gate(result, console)
    return result.exit_code


def gate_runs(
    baseline: str | Path,
    candidate: str | Path,
    *,
    allow_dataset_change: bool = False,
    **options: Any,
) -> tuple[GateResult, list[str]]:
    """:func:`~agenteval.gate.compare_runs`, over the candidate's case selection when it
    was made with one, and the lines saying which run was a selection.

    When the candidate is a selection of the baseline's dataset (same dataset hash) and
    the only baseline cases it lacks are cases its selection left out, the runs are compared
    on the cases they share (``allow_dataset_change`` for those cases only): a selected case
    with no trial in the candidate is still missing and blocks.
    """
    # imported when this command runs: the other commands start without it
    from agenteval.dataset.selection import describe_selection
    from agenteval.gate.paired import compare_runs
    from agenteval.rundir import read_header
    from agenteval.summary.sources import case_ids

    result = compare_runs(baseline, candidate, allow_dataset_change=allow_dataset_change, **options)
    heads = {"baseline": read_header(baseline), "candidate": read_header(candidate)}
    notes = []
    for role, h in heads.items():
        sel = h.settings.get("selection")
        if isinstance(sel, dict):
            notes.append(
                f"selection: the {role} run is a selection of its dataset"
                f" ({describe_selection(sel)}); the gate compares the cases both runs have"
            )
    b, c = heads["baseline"], heads["candidate"]
    missing = result.coverage.missing if result.coverage is not None else []
    if (
        missing
        and not allow_dataset_change
        and isinstance(c.settings.get("selection"), dict)
        and b.dataset.sha256 is not None
        and b.dataset.sha256 == c.dataset.sha256
    ):
        selected = set(case_ids(candidate))
        if not any(cid in selected for cid in missing):
            result = compare_runs(baseline, candidate, allow_dataset_change=True, **options)
            notes.append(
                f"selection: {len(missing)} baseline case(s) the candidate's selection left"
                " out are not compared (not counted missing)"
            )
    return result, notes


def run_compare(args: argparse.Namespace) -> int:
    """Print the runs side by side; always 0 for readable runs."""
    from agenteval.summary.compute import summarize  # (start-up: on first use)

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
    # imported when the command runs: --help starts without rich and the report modules
    from rich.table import Table
    from rich.text import Text

    from agenteval.report.terminal import fmt_s, fmt_usd, safe  # (start-up, as above)

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
        if all(s.scorers[n].applicable == 0 for s in summaries if n in s.scorers):
            continue  # applied nowhere: a row of dashes
        row(safe(n, 40), [_scorer_cell(s.scorers.get(n)) for s in summaries])
    row("latency p50", [fmt_s(s.latency.total.p50) for s in summaries])
    row("latency p95", [fmt_s(s.latency.total.p95) for s in summaries])
    row("cost total", [fmt_usd(s.cost.total_usd) for s in summaries])
    row("cost per correct", [fmt_usd(s.cost.per_correct_usd) for s in summaries])
    console.print(t)
    console.print(
        Text(
            "pass/fail scorers show the pass rate, graded ones the mean, each with its 95%"
            " interval (Wilson for rates, t for means) and n; no test is run; scorers that"
            " applied to no case are left out."
        )
    )


def _scorer_cell(ss: ScorerSummary | None) -> str:
    """``80.0% [62.1–91.0%] n=20`` or ``0.712 [0.640–0.784] n=20``; ``–`` when absent."""
    from agenteval.report.terminal import fmt_num, fmt_rate  # (start-up: on first use)

    if ss is None:
        return "–"
    if ss.applicable == 0:
        return "– n=0"
    if ss.binary:
        ci = ss.pass_rate_ci
        band = f" [{100 * ci.low:.1f}–{100 * ci.high:.1f}%]" if ci else ""
        return f"{fmt_rate(ss.pass_rate)}{band} n={ss.applicable}"
    ci = ss.mean_ci
    band = f" [{fmt_num(ci.low)}–{fmt_num(ci.high)}]" if ci else ""
    return f"{fmt_num(ss.mean)}{band} n={ss.applicable}"
