"""``agenteval gate BASELINE CANDIDATE`` and ``agenteval compare RUN_A RUN_B ...``.

``gate`` compares two runs case by case and exits 1 when the candidate must not ship
(a new safety failure; a significant drop beyond the allowed one; significantly more
failed trials), 0 otherwise, 2 for unusable input (e.g. runs over different datasets
without --allow-dataset-change). ``compare`` prints the runs' headline numbers side by
side and never gates.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agenteval.cli._common import console_for
from agenteval.errors import EXIT_OK, InputError
from agenteval.gate import GateResult, compare_runs
from agenteval.report import summarize
from agenteval.report.model import Summary
from agenteval.report.terminal import clean, fmt_num, fmt_rate, fmt_s, fmt_usd, safe

MAX_LISTED = 20


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
    g.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    g.add_argument(
        "--max-drop",
        action="extend",
        nargs="+",
        default=[],
        metavar="SCORER=VALUE",
        help="allowed drop for a scorer, in score units (0.05 = 5 points); default 0",
    )
    g.add_argument(
        "--allow-dataset-change",
        action="store_true",
        help="compare runs over different datasets on the case ids they share",
    )
    g.add_argument("--json", metavar="FILE", help="also write the verdict as JSON")
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
    """Compare, print the verdict, return 1 when blocked and 0 otherwise."""
    result = compare_runs(
        args.baseline,
        args.candidate,
        alpha=args.alpha,
        max_drop=parse_max_drop(args.max_drop),
        allow_dataset_change=args.allow_dataset_change,
    )
    render_gate(result, console_for(args))
    if args.json:
        Path(args.json).write_text(
            json.dumps(result.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
        )
    return result.exit_code


def render_gate(r: GateResult, console: Console) -> None:
    """Print what improved, what regressed, the cases that changed and the verdict."""
    console.print(
        Text(
            f"gate: baseline {clean(r.baseline_run)} vs candidate {clean(r.candidate_run)}"
            f" on {r.cases_compared} shared cases (alpha {r.alpha:g})"
        )
    )
    if r.dataset_changed:
        console.print(
            Text(
                f"datasets differ: {r.only_in_baseline} case(s) only in the baseline and"
                f" {r.only_in_candidate} only in the candidate were left out"
            )
        )
    t = Table(title="Scorers (paired cases)", title_justify="left")
    for col in ("scorer", "kind", "cases", "baseline", "candidate", "change", "test", "p"):
        t.add_column(col, justify="left" if col in ("scorer", "kind", "test") else "right")
    t.add_column("verdict")
    for c in r.scorers:
        pct = c.kind == "pass/fail"
        show = fmt_rate if pct else fmt_num
        change = f"{100 * c.delta:+.1f} pts" if pct else f"{c.delta:+.3f}"
        verdict = c.direction + (" (significant)" if c.significant else "")
        if c.blocks or c.safety_blocks:
            verdict = "BLOCKS (safety)" if c.safety_blocks else "BLOCKS"
        t.add_row(
            safe(c.scorer, 40), c.kind, str(c.paired), show(c.baseline), show(c.candidate),
            change, c.test, f"{c.p_value:.3g}", verdict,
        )  # fmt: skip
    console.print(t)
    for c in r.scorers:
        for label, ids in (("newly failing", c.newly_failing), ("newly passing", c.newly_passing)):
            if ids:
                more = f" (+{len(ids) - MAX_LISTED} more)" if len(ids) > MAX_LISTED else ""
                console.print(
                    Text(f"{clean(c.scorer)} {label} ({len(ids)}): ")
                    + Text(clean(", ".join(ids[:MAX_LISTED]), 400) + more)
                )
    for s in r.safety_regressions:
        console.print(
            Text(f"safety regression: {clean(s.scorer)} case {clean(s.case_id)}: ")
            + safe(s.reason, 200)
        )
    f = r.failures
    if f is not None:
        console.print(
            Text(
                f"failed trials: {f.baseline_failed} → {f.candidate_failed} cases"
                f" (new {len(f.newly_failed)}, recovered {len(f.recovered)},"
                f" {f.test} p={f.p_value:.3g})"
            )
        )
    verdict_text = Text(
        "BLOCKED" if r.blocked else "PASSED", style="bold red" if r.blocked else "bold green"
    )
    console.print(Text("verdict: ") + verdict_text)
    for reason in r.reasons:
        console.print(Text(f"  - {clean(reason, 400)}"))


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
