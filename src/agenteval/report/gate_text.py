"""The gate's verdict for a terminal: what changed, what blocks, what cannot be shown.

Untrusted text (case ids, scorer names, reasons) is printed with markup disabled and
control characters removed (:func:`agenteval.report.terminal.clean`).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agenteval.gate.model import GateResult, ScorerComparison
from agenteval.report.gate_unpaired_text import (
    VERDICT_STYLE,
    render_unpaired,
    scorer_verdict,
    verdict_lines,
    worse_lines,
)
from agenteval.report.terminal import clean, fmt_num, fmt_rate, safe

MAX_LISTED = 20


def _ids(ids: list[str]) -> str:
    more = f" (+{len(ids) - MAX_LISTED} more)" if len(ids) > MAX_LISTED else ""
    return clean(", ".join(ids[:MAX_LISTED]), 400) + more


def _test(name: str) -> str:
    """A short label: ``McNemar`` or ``perm. (exact|monte_carlo|normal)``."""
    if name.startswith("mcnemar"):
        return "McNemar"
    return name.replace("permutation_one_sided (", "perm. ").replace("monte_carlo", "MC")[:-1]


def scorer_cells(c: ScorerComparison) -> tuple[str, str, str, str, str]:
    """One scorer's row as text, shared by the terminal and the Markdown comment:
    (baseline, candidate, change, min detectable drop, verdict). Pass rates show as
    percentages and changes in points; graded means as numbers."""
    pct = c.kind == "pass/fail"
    show = fmt_rate if pct else fmt_num
    change = f"{100 * c.delta:+.1f} pts" if pct else f"{c.delta:+.3f}"
    mdd = "none" if c.underpowered else "–"
    if c.min_detectable_drop is not None:
        mdd = f"{100 * c.min_detectable_drop:.1f} pts"
    return show(c.baseline), show(c.candidate), change, mdd, scorer_verdict(c)


def render_gate(r: GateResult, console: Console) -> None:
    """Print the comparison table, the changed cases, the checks, notes and the verdict
    (the unpaired gate's: :func:`agenteval.report.gate_unpaired_text.render_unpaired`)."""
    if r.mode == "unpaired":
        render_unpaired(r, console)
        return
    console.print(
        Text(
            f"gate: baseline {clean(r.baseline_run)} vs candidate {clean(r.candidate_run)}"
            f" on {r.cases_compared} shared cases (alpha {r.alpha:g}; one-sided tests,"
            f" Holm over {r.family_size})"
        )
    )
    worse = worse_lines(r)
    if worse:
        console.print(Text("got worse:", style="bold"))
        for line in worse:
            console.print(Text(f"  {clean(line, 600)}"))
    if r.dataset_changed:
        console.print(
            Text(
                f"datasets differ: {r.only_in_baseline} case(s) only in the baseline and"
                f" {r.only_in_candidate} only in the candidate were left out"
            )
        )
    t = Table(title="Scorers (paired cases)", title_justify="left")
    t.add_column("scorer", min_width=20, overflow="fold")
    for col in ("cases", "base", "cand.", "change", "test", "p Holm", "min drop"):
        t.add_column(col, justify="left" if col == "test" else "right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    for c in r.scorers:
        base, cand, change, mdd, verdict = scorer_cells(c)
        t.add_row(
            safe(c.scorer, 60), str(c.paired), base, cand, change,
            _test(c.test), f"{c.p_adjusted:.3g}", mdd, verdict,
        )  # fmt: skip
    console.print(t)
    console.print(
        Text(
            "one-sided tests (is the candidate worse?): exact McNemar for pass/fail scorers,"
            " sign-flip permutation for graded ones; p Holm: Holm-adjusted p-value; min"
            " drop: the smallest drop that could block on these cases (none: no drop can)"
        )
    )
    for c in r.scorers:
        if c.newly_passing:
            head = f"{clean(c.scorer)} newly passing ({len(c.newly_passing)}): "
            console.print(Text(head) + Text(_ids(c.newly_passing)))
    for s in r.safety_regressions:
        console.print(
            Text(f"safety regression: {clean(s.scorer)} case {clean(s.case_id)}: ")
            + safe(s.reason, 200)
            + Text(f" (baseline: {clean(s.baseline, 100)})")
        )
    f = r.failures
    if f is not None:
        console.print(
            Text(
                f"failed trials: {f.baseline_failed} → {f.candidate_failed} cases"
                f" (new {len(f.newly_failed)}, recovered {len(f.recovered)},"
                f" {f.test} p={f.p_value:.3g}, Holm p={f.p_adjusted:.3g})"
            )
        )
    cov = r.coverage
    if cov is not None:
        console.print(
            Text(
                f"answered cases: {cov.baseline_answered} → {cov.candidate_answered} of"
                f" {cov.paired} shared (no longer answered {len(cov.newly_unanswered)},"
                f" newly answered {len(cov.newly_answered)}, {cov.test}"
                f" p={cov.p_value:.3g}, Holm p={cov.p_adjusted:.3g})"
            )
        )
        if cov.missing:
            console.print(
                Text(f"missing from the candidate ({len(cov.missing)}): ") + Text(_ids(cov.missing))
            )
    for note in r.notes:
        console.print(Text(f"note: {clean(note, 600)}"))
    console.print(Text("verdict: ") + Text(r.verdict, style=VERDICT_STYLE[r.verdict]))
    for line in verdict_lines(r):
        console.print(Text(f"  - {clean(line, 600)}"))
