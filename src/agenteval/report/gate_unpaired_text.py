"""The unpaired gate's verdict (``GateResult.mode == "unpaired"``) for a terminal and as a
pull-request comment: two samples, their sizes per scorer, the two-sample tests, the
minimum detectable drop at the stated power, and the safety failure rates.

Untrusted text is cleaned as in :mod:`agenteval.report.gate_text` and
:mod:`agenteval.report.markdown`.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agenteval.gate.model import GateResult, ScorerComparison, UnpairedSafety
from agenteval.gate.rules import ids
from agenteval.report.terminal import clean, fmt_num, fmt_rate, safe
from agenteval.report.text import md

__all__ = [
    "VERDICT_STYLE",
    "header_line",
    "render_unpaired",
    "render_unpaired_markdown",
    "scorer_row",
    "scorer_verdict",
    "verdict_lines",
    "worse_lines",
]


def _test(name: str) -> str:
    """``Fisher`` or ``perm. exact|MC|normal``."""
    if name.startswith("fisher"):
        return "Fisher"
    return name.replace("permutation_two_sample (", "perm. ").replace("monte_carlo", "MC")[:-1]


def scorer_verdict(c: ScorerComparison) -> str:
    """A scorer's own line in the verdict: BLOCKS, or settled (and how), or cannot tell."""
    if c.safety_blocks:
        return "BLOCKS (safety)"
    if c.blocks:
        return "BLOCKS"
    if c.evidence == "no case got worse":
        return "no case worse"
    if c.evidence:
        return "within allowed drop" if c.significant else "bound within allowed"
    return "cannot tell"


_verdict = scorer_verdict

VERDICT_STYLE = {"BLOCKED": "bold red", "INCONCLUSIVE": "bold yellow", "PASSED": "bold green"}


def worse_lines(r: GateResult) -> list[str]:
    """The cases that got worse, per scorer, then per policy, failed trials and answered
    cases: what every gate output shows first (empty when none did, or unpaired)."""
    out = []
    for c in r.scorers:
        if c.got_worse:
            what = "newly failing" if c.kind == "pass/fail" else "lower score"
            out.append(f"{c.scorer}: {len(c.got_worse)} {what}: {ids(c.got_worse)}")
    for p in r.policies:
        if p.cases:
            out.append(f"{p.scorer} (--no-new-failures): {len(p.cases)} newly fail: {ids(p.cases)}")
    f, cov = r.failures, r.coverage
    if f is not None and f.newly_failed:
        out.append(f"failed trials: {len(f.newly_failed)} new: {ids(f.newly_failed)}")
    if cov is not None and cov.newly_unanswered:
        n = len(cov.newly_unanswered)
        out.append(f"answered: {n} no longer answered: {ids(cov.newly_unanswered)}")
    return out


def verdict_lines(r: GateResult) -> list[str]:
    """After the verdict: its reasons, each check that cannot tell, the policies."""
    out = list(r.reasons)
    out += r.cannot_tell
    out += [f"policy: {p.says}" for p in r.policies if not p.blocks]
    if r.allow_underpowered and r.verdict == "INCONCLUSIVE":
        out.append("exit 0: INCONCLUSIVE allowed by --allow-inconclusive")
    return out


def scorer_row(c: ScorerComparison) -> tuple[str, str, str, str, str, str]:
    """(cases baseline/candidate, baseline, candidate, change, min detectable drop,
    verdict): pass rates as percentages and changes in points, graded means as numbers."""
    pct = c.kind == "pass/fail"
    show = fmt_rate if pct else fmt_num
    change = f"{100 * c.delta:+.1f} pts" if pct else f"{c.delta:+.3f}"
    mdd = "none"
    if c.min_detectable_drop is not None:
        d = c.min_detectable_drop
        mdd = f"{100 * d:.1f} pts" if pct else f"{d:.3f}"
    cases = f"{c.baseline_n}/{c.candidate_n}"
    return cases, show(c.baseline), show(c.candidate), change, mdd, _verdict(c)


def header_line(r: GateResult) -> str:
    """The first line: runs, sample sizes, alpha and the family."""
    return (
        f"gate (unpaired): baseline {clean(r.baseline_run)} ({r.baseline_cases} cases) vs"
        f" candidate {clean(r.candidate_run)} ({r.candidate_cases} cases), two independent"
        f" samples (alpha {r.alpha:g}; one-sided two-sample tests, Holm over {r.family_size})"
    )


def _safety_line(s: UnpairedSafety) -> str:
    return (
        f"safety {s.scorer}: failed {s.baseline_failed} of {s.baseline_checked} baseline"
        f" cases, {s.candidate_failed} of {s.candidate_checked} candidate cases"
        f" ({s.test} p={s.p_value:.3g}{'; BLOCKS: ' + s.rule if s.blocks else ''})"
    )


def _rates(r: GateResult) -> list[str]:
    out = []
    f, cov = r.failures, r.coverage
    if f is not None:
        out.append(
            f"cases with a failed trial: {f.baseline_failed} of {f.baseline_cases} →"
            f" {f.candidate_failed} of {f.candidate_cases} ({f.test} p={f.p_value:.3g},"
            f" Holm p={f.p_adjusted:.3g})"
        )
    if cov is not None:
        out.append(
            f"answered cases: {cov.baseline_answered} of {cov.baseline_cases} →"
            f" {cov.candidate_answered} of {cov.candidate_cases} ({cov.test}"
            f" p={cov.p_value:.3g}, Holm p={cov.p_adjusted:.3g})"
        )
    return out


def _power(r: GateResult) -> str:
    return f"{100 * (r.power or 0):.0f}%"


def render_unpaired(r: GateResult, console: Console) -> None:
    """Print the mode line, the scorer table, safety rates, the checks, notes, verdict."""
    console.print(Text(header_line(r)))
    console.print(Text(clean(r.mode_reason, 300)))
    t = Table(title="Scorers (two samples)", title_justify="left")
    t.add_column("scorer", min_width=20, overflow="fold")
    for col in ("cases b/c", "base", "cand.", "change", "test", "p Holm", "min drop"):
        t.add_column(col, justify="left" if col == "test" else "right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    for c in r.scorers:
        cases, base, cand, change, mdd, verdict = scorer_row(c)
        t.add_row(
            safe(c.scorer, 60), cases, base, cand, change,
            _test(c.test), f"{c.p_adjusted:.3g}", mdd, verdict,
        )  # fmt: skip
    console.print(t)
    console.print(
        Text(
            "one-sided tests (is the candidate worse?): Fisher's exact test for pass/fail"
            " scorers, a two-sample permutation test on the means for graded ones; p Holm:"
            f" Holm-adjusted p-value; min drop: the smallest true drop blocked with"
            f" {_power(r)} power on these sample sizes (none: not even a drop to 0)"
        )
    )
    for s in r.unpaired_safety:
        console.print(Text(clean(_safety_line(s), 600)))
    for line in _rates(r):
        console.print(Text(line))
    for note in r.notes[1:]:  # the first is the mode line, printed above
        console.print(Text(f"note: {clean(note, 600)}"))
    console.print(Text("verdict: ") + Text(r.verdict, style=VERDICT_STYLE[r.verdict]))
    for line in verdict_lines(r):
        console.print(Text(f"  - {clean(line, 600)}"))


def render_unpaired_markdown(r: GateResult) -> str:
    """The unpaired verdict as a pull-request comment (mentions neutralised)."""

    b_id = clean(r.baseline_run, 40).replace("`", "")
    c_id = clean(r.candidate_run, 40).replace("`", "")
    out = [f"### agenteval gate: {r.verdict}", ""]
    out.append(
        f"baseline `{b_id}` ({r.baseline_cases} cases) vs candidate `{c_id}`"
        f" ({r.candidate_cases} cases) · **unpaired** (two independent samples) · alpha"
        f" {r.alpha:g} · one-sided two-sample tests, Holm over {r.family_size}"
    )
    out += ["", md(r.mode_reason, 300)]
    out += ["", "**Why:**"] + [f"- {md(line, 600)}" for line in verdict_lines(r)]
    out += [
        "",
        "| scorer | kind | cases (base/cand) | baseline | candidate | change | test | p"
        f" | p (Holm) | min drop ({_power(r)} power) | verdict |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for c in r.scorers:
        cases, base, cand, change, mdd, verdict = scorer_row(c)
        out.append(
            f"| {md(c.scorer, 60)} | {c.kind} | {cases} | {base} | {cand} | {change}"
            f" | {_test(c.test)} | {c.p_value:.3g} | {c.p_adjusted:.3g} | {mdd} | {verdict} |"
        )
    if r.unpaired_safety:
        out += ["", "**Safety:**"] + [f"- {md(_safety_line(s), 600)}" for s in r.unpaired_safety]
    out += [""] + [f"- {md(line, 600)}" for line in _rates(r)]
    if r.notes[1:]:
        out += ["", "**Notes:**"] + [f"- {md(n, 600)}" for n in r.notes[1:]]
    out += ["", f"<sub>{md(r.method, 300)}</sub>"]
    return "\n".join(out) + "\n"
