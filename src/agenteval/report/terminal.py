"""The terminal summary: compact rich tables built from a Summary.

Untrusted text (case ids, tags, scorer names, failure messages) is passed to rich as
``Text`` objects, so it is never parsed as markup, and escape sequences and unsafe
characters (:func:`agenteval._util.untrusted.strip_unsafe`: C0/C1 controls, bidi overrides,
noncharacters, lone surrogates) are stripped from it first.
"""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agenteval._util.untrusted import strip_unsafe
from agenteval.summary.model import Distribution, ScorerSummary, Summary


def clean(text: object, limit: int = 200) -> str:
    """``text`` as a single safe line: ANSI and control characters removed, shortened."""
    s = strip_unsafe(str(text)[: limit * 8]).replace("\n", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def safe(text: object, limit: int = 200) -> Text:
    """Untrusted text as a rich Text (no markup), cleaned by :func:`clean`."""
    return Text(clean(text, limit))


def fmt_rate(x: float | None) -> str:
    """A rate in [0, 1] as a percentage with one decimal, or an en dash."""
    return "–" if x is None else f"{100 * x:.1f}%"


def fmt_num(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals, or an en dash."""
    return "–" if x is None else f"{x:.{digits}f}"


def fmt_usd(x: float | None) -> str:
    """Dollars: two decimals from $1, three significant digits below; 'unknown' for None."""
    if x is None:
        return "unknown"
    if x == 0:
        return "$0"
    if abs(x) >= 1:
        return f"${x:,.2f}"
    if abs(x) < 1e-6:
        return "< $0.000001"
    decimals = min(10, max(2, 2 - math.floor(math.log10(abs(x)))))
    return f"${x:.{decimals}f}"  # three significant digits


def fmt_s(x: float | None) -> str:
    """Seconds, or an en dash."""
    return "–" if x is None else f"{x:.2f}s"


def render_terminal(summary: Summary, console: Console, *, all_scorers: bool = False) -> None:
    """Print the summary as compact tables: headline, scorers, tags, latency, cost,
    retries, failures, attribution and repeats (sections with nothing to show are omitted).

    The scores table lists the scorers that applied to some trial (or errored, or were
    inconclusive), then one line naming those that applied to none; ``all_scorers`` lists
    every scorer (``agenteval report --all-scorers``).
    """
    s = summary
    head = Text()
    head.append("run ", style="bold")
    head.append(clean(s.run_id or "?"))
    head.append(f"  trials {s.trials}  cases {s.cases}  answered {s.answered}  failed {s.failed}")
    console.print(head)
    console.print(_scorers_table(s, all_scorers))
    idle = [] if all_scorers else [n for n, ss in s.scorers.items() if not _gave_result(ss)]
    if idle:
        console.print(
            Text(f"not applicable to any trial ({len(idle)}): ")
            + safe(", ".join(idle), 600)
            + Text(" (agenteval report --all-scorers lists them)")
        )
    if s.tags:
        console.print(_tags_table(s))
    console.print(_latency_table(s))
    console.print(_cost_table(s))
    if s.retries.total:
        t = Table(title="Retries", title_justify="left")
        t.add_column("reason")
        t.add_column("count", justify="right")
        t.add_column("wait", justify="right")
        for reason, rc in sorted(s.retries.by_reason.items()):
            t.add_row(safe(reason), str(rc.count), fmt_s(rc.wait_s))
        console.print(t)
    if s.failures.total:
        t = Table(title="Failures", title_justify="left")
        t.add_column("cause")
        t.add_column("count", justify="right")
        t.add_column("e.g. cases")
        t.add_column("first message")
        for cause, cc in sorted(s.failures.by_cause.items(), key=lambda kv: -kv[1].count):
            t.add_row(
                safe(cause), str(cc.count), safe(", ".join(cc.examples)), safe(cc.message, 80)
            )
        console.print(t)
    a = s.attribution
    if a is not None and a.wrong:
        console.print(
            Text(
                f"Wrong answers ({clean(a.correct_by or '')}): {a.wrong}"
                f" — retrieval {a.retrieval}, model {a.model}, unknown {a.unknown}"
            )
        )
    if s.repeats is not None:
        console.print(_repeats_table(s))


def _gave_result(ss: ScorerSummary) -> bool:
    return bool(ss.applicable or ss.errors or ss.inconclusive)


def _scorers_table(s: Summary, all_scorers: bool = True) -> Table:
    t = Table(title="Scores", title_justify="left")
    for col in ("scorer", "mean", "pass rate", "95% CI", "n", "n/a", "inconcl.", "errors"):
        t.add_column(col, justify="left" if col == "scorer" else "right")
    for name, ss in s.scorers.items():
        if not all_scorers and not _gave_result(ss):
            continue
        ci = ss.pass_rate_ci
        t.add_row(
            safe(name, 40),
            fmt_num(ss.mean),
            fmt_rate(ss.pass_rate),
            "–" if ci is None else f"{fmt_rate(ci.low)}–{fmt_rate(ci.high)}",
            str(ss.applicable),
            str(ss.not_applicable),
            str(ss.inconclusive),
            str(ss.errors),
        )
    return t


def _tags_table(s: Summary) -> Table:
    names = list(s.scorers)[:6]
    t = Table(title="Pass rate by tag", title_justify="left")
    t.add_column("tag")
    t.add_column("trials", justify="right")
    for n in names:
        t.add_column(safe(n, 20), justify="right")
    for tag, ts in sorted(s.tags.items()):
        cells: list[str | Text] = [safe(tag, 40), str(ts.trials)]
        for n in names:
            sc = ts.scorers.get(n)
            cells.append(fmt_rate(sc.pass_rate) if sc else "–")
        t.add_row(*cells)
    return t


def _latency_table(s: Summary) -> Table:
    t = Table(title="Latency", title_justify="left")
    for col in ("", "n", "p50", "p95", "mean", "max"):
        t.add_column(col, justify="left" if not col else "right")

    def row(label: str, d: Distribution) -> None:
        t.add_row(label, str(d.n), fmt_s(d.p50), fmt_s(d.p95), fmt_s(d.mean), fmt_s(d.max))

    row("total (user waits)", s.latency.total)
    row("active (in requests)", s.latency.active)
    return t


def _cost_table(s: Summary) -> Table:
    c = s.cost
    t = Table(title="Cost", title_justify="left", caption_justify="left")
    for col in ("", "USD", "tokens in", "tokens out"):
        t.add_column(col, justify="left" if not col else "right")
    agent_usd = (
        _partial(c.agent_usd, c.agent_known_usd)
        if c.agent_usage_recorded
        else "unknown (no tokens recorded)"
    )
    t.add_row(
        "agent", agent_usd,
        f"{c.agent_tokens.input:,}", f"{c.agent_tokens.output:,}",
    )  # fmt: skip
    judged = c.judge_tokens.input + c.judge_tokens.output > 0 or c.judge_unpriced_scores > 0
    t.add_row(
        "judge", _partial(c.judge_usd, c.judge_known_usd) if judged else "no judge calls",
        f"{c.judge_tokens.input:,}", f"{c.judge_tokens.output:,}",
    )  # fmt: skip
    if c.user_tokens.input + c.user_tokens.output > 0 or c.user_unpriced_trials > 0:
        t.add_row(
            "simulated user", _partial(c.user_usd, c.user_known_usd),
            f"{c.user_tokens.input:,}", f"{c.user_tokens.output:,}",
        )  # fmt: skip
    t.add_row("total", fmt_usd(c.total_usd), "", "")
    t.add_row("per trial", fmt_usd(c.per_trial_usd), "", "")
    label = f"per correct ({clean(c.correct_by, 30)}, {c.correct})" if c.correct_by else None
    if label:
        t.add_row(Text(label), fmt_usd(c.per_correct_usd), "", "")
    if c.unknown_models:
        t.caption = Text("no price for: " + clean(", ".join(c.unknown_models), 120))
    return t


def _partial(full: float | None, known: float) -> str:
    return fmt_usd(full) if full is not None else f"unknown (≥ {fmt_usd(known)})"


def _repeats_table(s: Summary) -> Table:
    r = s.repeats
    assert r is not None
    t = Table(title=f"Repeats (k = {r.k})", title_justify="left", caption_justify="left")
    for col in ("scorer", "cases", "pass@1", f"pass@{r.k}", f"pass^{r.k}"):
        t.add_column(col, justify="left" if col == "scorer" else "right")
    for name, rs in r.scorers.items():
        t.add_row(
            safe(name, 40),
            str(rs.cases),
            fmt_rate(rs.pass_at_1),
            fmt_rate(rs.pass_at_k),
            fmt_rate(rs.pass_hat_k),
        )
    if r.flaky_count:
        shown = ", ".join(f.case_id for f in r.flaky[:10])
        more = f" (+{r.flaky_count - 10} more)" if r.flaky_count > 10 else ""
        t.caption = Text(clean(f"flaky cases: {r.flaky_count}: {shown}{more}", 300))
    return t
