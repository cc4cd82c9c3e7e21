"""A Markdown summary sized for a pull-request comment.

Untrusted text (case ids, tags, reasons, failure messages) is put on one line, stripped
of control characters, HTML-escaped (``<``, ``>``, ``&``) and has Markdown punctuation
backslash-escaped, so it can neither inject HTML nor break a table; and every ``@`` before
a name gets a zero-width joiner after it, so ``@user`` or ``@org/team`` shows as written
but notifies nobody. :func:`render_gate_markdown` renders a gate verdict the same way.
"""

from __future__ import annotations

from pathlib import Path

from agenteval.gate.model import GateResult
from agenteval.llm.pricing import PriceTable
from agenteval.report.gate_text import scorer_cells
from agenteval.report.gate_unpaired_text import (
    render_unpaired_markdown,
    verdict_lines,
    worse_lines,
)
from agenteval.report.terminal import clean, fmt_num, fmt_rate, fmt_s, fmt_usd
from agenteval.report.text import md
from agenteval.rundir import iter_trials, read_header
from agenteval.summary.compute import summarize_records
from agenteval.summary.model import Summary
from agenteval.summary.percase import aggregate_cases
from agenteval.summary.sources import load_cases

MAX_FAILING_CASES = 10


def render_markdown(summary: Summary, failing: list[tuple[str, str, str]] | None = None) -> str:
    """The Markdown text for ``summary``; ``failing`` is (case id, scorer, reason) rows."""
    s = summary
    out = [f"### agenteval: run `{clean(s.run_id or '?', 40).replace('`', '')}`", ""]
    out.append(
        f"**{s.trials}** trials over **{s.cases}** cases · answered {s.answered}"
        f" · failed {s.failed} · latency p50 {fmt_s(s.latency.total.p50)}"
        f" / p95 {fmt_s(s.latency.total.p95)} · cost {fmt_usd(s.cost.total_usd)}"
    )
    out += ["", "| scorer | mean | pass rate | 95% CI (Wilson) | n | n/a | inconclusive | errors |"]
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, ss in s.scorers.items():
        ci = ss.pass_rate_ci
        ci_txt = "–" if ci is None else f"{fmt_rate(ci.low)}–{fmt_rate(ci.high)}"
        out.append(
            f"| {md(name, 60)} | {fmt_num(ss.mean)} | {fmt_rate(ss.pass_rate)} | {ci_txt}"
            f" | {ss.applicable} | {ss.not_applicable} | {ss.inconclusive} | {ss.errors} |"
        )
    c = s.cost
    out += ["", "| cost | USD |", "|---|---:|"]
    out.append(f"| agent | {fmt_usd(c.agent_usd)} |")
    out.append(f"| judge | {fmt_usd(c.judge_usd)} |")
    if c.user_tokens.input + c.user_tokens.output > 0 or c.user_unpriced_trials > 0:
        out.append(f"| simulated user | {fmt_usd(c.user_usd)} |")
    out.append(f"| per trial | {fmt_usd(c.per_trial_usd)} |")
    if c.correct_by:
        out.append(
            f"| per correct answer ({md(c.correct_by, 40)}) | {fmt_usd(c.per_correct_usd)} |"
        )
    if s.failures.total:
        causes = ", ".join(f"{md(k, 40)} {v.count}" for k, v in sorted(s.failures.by_cause.items()))
        out += ["", f"**Failed trials:** {causes}"]
    if s.retries.total:
        reasons = ", ".join(
            f"{md(k, 40)} {v.count}" for k, v in sorted(s.retries.by_reason.items())
        )
        out += ["", f"**Retries:** {reasons}"]
    a = s.attribution
    if a is not None and a.wrong:
        out += [
            "",
            f"**Wrong answers:** {a.wrong} (retrieval {a.retrieval}, model {a.model},"
            f" unknown {a.unknown})",
        ]
    if s.repeats is not None:
        r = s.repeats
        out += ["", f"| scorer | pass@1 | pass^{r.k} |", "|---|---:|---:|"]
        for name, rs in r.scorers.items():
            out.append(f"| {md(name, 60)} | {fmt_rate(rs.pass_at_1)} | {fmt_rate(rs.pass_hat_k)} |")
        out += ["", f"Flaky cases: {r.flaky_count}"]
    if failing:
        out += ["", "<details><summary>Failing cases</summary>", ""]
        out += ["| case | scorer | reason |", "|---|---|---|"]
        for cid, name, reason in failing:
            out.append(f"| {md(cid, 60)} | {md(name, 40)} | {md(reason, 160)} |")
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def write_markdown(
    run_dir: str | Path, out_path: str | Path, *, prices: PriceTable | None = None
) -> Summary:
    """Write the Markdown summary of ``run_dir`` (with up to 10 failing cases); returns it."""
    header = read_header(run_dir)
    cases = load_cases(run_dir)
    summary = summarize_records(header, iter_trials(run_dir), cases, prices=prices)
    failing: list[tuple[str, str, str]] = []
    for cid, agg in aggregate_cases(iter_trials(run_dir)).items():
        for name, cs in agg.scores.items():
            if cs.all_passed is False and len(failing) < MAX_FAILING_CASES:
                failing.append((cid, name, cs.first_failure or ""))
        if len(failing) >= MAX_FAILING_CASES:
            break
    Path(out_path).write_text(render_markdown(summary, failing), encoding="utf-8")
    return summary


def _md_ids(ids: list[str], limit: int = 10) -> str:
    more = f" (+{len(ids) - limit} more)" if len(ids) > limit else ""
    return ", ".join(md(i, 60) for i in ids[:limit]) + more


def render_gate_markdown(r: GateResult) -> str:
    """A gate verdict as a pull-request comment: verdict, reasons, scorer table, safety
    regressions, failed and answered cases, missing cases, notes, and the method (the
    unpaired gate's: :func:`agenteval.report.gate_unpaired_text.render_unpaired_markdown`)."""
    if r.mode == "unpaired":
        return render_unpaired_markdown(r)
    b_id = clean(r.baseline_run, 40).replace("`", "")
    c_id = clean(r.candidate_run, 40).replace("`", "")
    out = [f"### agenteval gate: {r.verdict}", ""]
    out.append(
        f"baseline `{b_id}` vs candidate `{c_id}` · {r.cases_compared} shared cases"
        f" · alpha {r.alpha:g} · one-sided exact tests, Holm over {r.family_size}"
    )
    worse = worse_lines(r)
    if worse:
        out += ["", "**Got worse:**"] + [f"- {md(line, 600)}" for line in worse]
    out += ["", "**Why:**"] + [f"- {md(line, 600)}" for line in verdict_lines(r)]
    out += [
        "",
        "| scorer | kind | cases | baseline | candidate | change | p | p (Holm) | min drop"
        " | verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in r.scorers:
        base, cand, change, mdd, verdict = scorer_cells(c)
        out.append(
            f"| {md(c.scorer, 60)} | {c.kind} | {c.paired} | {base}"
            f" | {cand} | {change} | {c.p_value:.3g} | {c.p_adjusted:.3g}"
            f" | {mdd} | {verdict} |"
        )
    if r.safety_regressions:
        out += ["", "**Safety regressions**", "", "| scorer | case | reason | baseline |"]
        out.append("|---|---|---|---|")
        for s in r.safety_regressions[:MAX_FAILING_CASES]:
            out.append(
                f"| {md(s.scorer, 40)} | {md(s.case_id, 60)} | {md(s.reason, 160)}"
                f" | {md(s.baseline, 80)} |"
            )
        if len(r.safety_regressions) > MAX_FAILING_CASES:
            out.append(f"\n(+{len(r.safety_regressions) - MAX_FAILING_CASES} more)")
    f, cov = r.failures, r.coverage
    if f is not None:
        out += [
            "",
            f"**Failed trials:** {f.baseline_failed} → {f.candidate_failed} cases"
            f" (new: {_md_ids(f.newly_failed) or 'none'}; p={f.p_value:.3g},"
            f" Holm p={f.p_adjusted:.3g})",
        ]
    if cov is not None:
        out += [
            "",
            f"**Answered cases:** {cov.baseline_answered} → {cov.candidate_answered} of"
            f" {cov.paired} (no longer answered: {_md_ids(cov.newly_unanswered) or 'none'};"
            f" p={cov.p_value:.3g}, Holm p={cov.p_adjusted:.3g})",
        ]
        if cov.missing:
            n = len(cov.missing)
            out += ["", f"**Missing from the candidate ({n}):** {_md_ids(cov.missing)}"]
    if r.notes:
        out += ["", "**Notes:**"] + [f"- {md(n, 600)}" for n in r.notes]
    out += ["", f"<sub>{md(r.method, 300)}</sub>"]
    return "\n".join(out) + "\n"
