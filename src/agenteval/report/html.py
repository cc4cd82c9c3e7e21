"""The HTML report: one self-contained file (inline CSS, JS and SVG; no network request).

Safety: the template is rendered with autoescaping, so every piece of agent- or
dataset-provided text (outputs, tool arguments and results, case ids, tags, reasons) is
escaped; the page's own script only toggles visibility and reads ``data-*`` attributes with
``textContent``/``JSON.parse``, never ``innerHTML``. As a second line of defence the page
carries a Content-Security-Policy that allows no network access and runs only the one
script whose SHA-256 it names (so an injected inline script or event handler could not
run even if escaping failed).

The file is written in two streaming passes over ``trials.jsonl``: one for the Summary,
one that renders the trial rows as they are read.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from agenteval._util.secrets import redact_mapping
from agenteval._util.untrusted import show_unsafe
from agenteval._version import __version__
from agenteval.cases.case import Case
from agenteval.llm.pricing import PriceTable
from agenteval.report import svg
from agenteval.report.chat import Chat, chat_of
from agenteval.report.terminal import fmt_num, fmt_rate, fmt_s, fmt_usd
from agenteval.rundir import RunHeader, TrialRecord, iter_trials, read_header
from agenteval.scoring.score import Score
from agenteval.summary.compute import summarize_records
from agenteval.summary.model import Summary
from agenteval.summary.sources import load_cases, price_table_of

MAX_TEXT = 20_000
"""Longest text shown for one field of a trial; longer text is cut with a note."""


@dataclass(slots=True)
class ScoreRow:
    name: str
    value: float | None
    status: str  # pass | fail | na | inconclusive | error
    reason: str


@dataclass(slots=True)
class ToolRow:
    name: str
    arguments: str
    result: str
    error: str | None
    duration: str


@dataclass(slots=True)
class TrialRow:
    index: int
    case_id: str
    repeat: int
    tags: list[str]
    status: str  # pass | fail | failure
    failure: str | None
    input: str
    expected: str | None
    output: str | None
    latency: str
    active: str
    cost: str
    retries: str
    tool_calls: list[ToolRow] = field(default_factory=list)
    scores: list[ScoreRow] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    search: str = ""
    chat: Chat | None = None  # a conversation's turns (agenteval.report.chat)


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters not shown)"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return _cut(value)
    return _cut(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _input_text(case: Case | None) -> str:
    if case is None:
        return "(case not in the run's snapshot)"
    if isinstance(case.input, str):
        return _cut(case.input)
    lines = [f"{m.get('role')}: {_as_text(m.get('content'))}" for m in case.input]
    return _cut("\n".join(lines))


_STATUS_CLASS = {
    "passed": "pass",
    "failed": "fail",
    "not_applicable": "na",
    "inconclusive": "inconclusive",
    "error": "error",
}
"""A score's status (stored data, never read from its reason) -> the row's CSS class."""


def _score_status(s: Score) -> str:
    return _STATUS_CLASS[s.status]


def trial_rows(
    records: Iterator[TrialRecord], cases: Mapping[str, Case] | None, prices: PriceTable
) -> Iterator[TrialRow]:
    """One display row per trial, streamed (texts cut at :data:`MAX_TEXT` characters)."""
    for i, rec in enumerate(records):
        case = cases.get(rec.case_id) if cases else None
        scores = [
            ScoreRow(name, s.value, _score_status(s), _cut(s.error or s.reason))
            for name, s in rec.scores.items()
        ]
        failing = [s.name for s in scores if s.status == "fail"]
        status = "failure" if rec.failure else ("fail" if failing else "pass")
        cost = prices.cost(rec.usage)
        tags = list(case.tags) if case else []
        row = TrialRow(
            index=i,
            case_id=rec.case_id,
            repeat=rec.repeat,
            tags=tags,
            status=status,
            failure=(f"{rec.failure.cause}: {rec.failure.message}" if rec.failure else None),
            input=_input_text(case),
            expected=None if case is None or case.expected is None else str(case.expected),
            output=None if rec.output is None else _cut(rec.output),
            latency=fmt_s(rec.latency.total_s),
            active=fmt_s(rec.latency.active_s),
            cost=fmt_usd(cost) if rec.usage else "–",
            retries=", ".join(f"{r.reason} ({r.wait_s:.1f}s)" for r in rec.retries),
            tool_calls=[
                ToolRow(
                    name=tc.name,
                    arguments=_as_text(tc.arguments),
                    result=_as_text(tc.result),
                    error=tc.error,
                    duration=fmt_s(tc.duration_s),
                )
                for tc in rec.tool_calls
            ],
            scores=scores,
            failing=failing,
            errors=[s.name for s in scores if s.status == "error"],
        )
        row.chat = chat_of(rec, row.tool_calls, _as_text, fmt_s)
        row.search = " ".join(
            [rec.case_id, *tags, status, *failing, (rec.output or "")[:2000]]
        ).lower()
        yield row


def _visible_controls(value: Any) -> Any:
    """Untrusted text with control, bidi-override and other unsafe characters shown, never
    acted on (:func:`agenteval._util.untrusted.show_unsafe`)."""
    return show_unsafe(value) if type(value) is str else value


def template_env(package: str) -> jinja2.Environment:
    """The jinja environment of agenteval's HTML pages (this report, ``agenteval view``):
    the templates of ``package``, autoescaped, untrusted text's unsafe characters shown, the
    terminal's number formats as filters."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        finalize=_visible_controls,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["rate"] = fmt_rate
    env.filters["num"] = fmt_num
    env.filters["secs"] = fmt_s
    env.filters["usd"] = fmt_usd
    return env


def _env() -> jinja2.Environment:
    return template_env("agenteval.report")


def _charts(s: Summary) -> dict[str, Any]:
    scorer_bars = [
        svg.Bar(
            name,
            ss.pass_rate,
            ss.pass_rate_ci.low if ss.pass_rate_ci else None,
            ss.pass_rate_ci.high if ss.pass_rate_ci else None,
            f"n={ss.applicable}",
        )
        for name, ss in s.scorers.items()
    ]
    c = s.cost
    return {
        "latency_total": svg.histogram(s.latency.total.histogram, title="Total latency"),
        "latency_active": svg.histogram(s.latency.active.histogram, title="Active latency"),
        "scorers": svg.bars(scorer_bars, title="Pass rate by scorer, 95% Wilson interval"),
        "cost": svg.split_bar(
            [("agent", c.agent_known_usd), ("judge", c.judge_known_usd)], title="Cost split"
        ),
    }


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def render_html(
    header: RunHeader,
    summary: Summary,
    rows: Iterator[TrialRow],
) -> Iterator[str]:
    """Stream the report's HTML in chunks (rows are consumed as they are rendered)."""
    env = _env()
    script = env.get_template("report.js.j2").render()
    css = env.get_template("report.css.j2").render()
    template = env.get_template("report.html.j2")
    names = list(summary.scorers)
    headline = summary.cost.correct_by or (names[0] if names else None)
    if headline not in summary.scorers:
        headline = None
    return template.generate(
        header=header,
        agent_json=json.dumps(
            redact_mapping(header.agent), indent=2, ensure_ascii=False, default=str
        )
        if header.agent
        else None,
        s=summary,
        headline=headline,
        charts=_charts(summary),
        rows=rows,
        scorer_names=names,
        tags=sorted(summary.tags),
        script=Markup(script),
        css=Markup(css),
        script_hash=_script_hash(script),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
    )


def write_html(
    run_dir: str | Path, out_path: str | Path, *, prices: PriceTable | None = None
) -> Summary:
    """Write the self-contained HTML report of ``run_dir`` to ``out_path``; returns the Summary.

    ``prices`` defaults to the run's recorded price table over the built-in defaults.
    """
    header = read_header(run_dir)
    cases = load_cases(run_dir)
    table = prices or price_table_of(header)
    summary = summarize_records(header, iter_trials(run_dir), cases, prices=table)
    rows = trial_rows(iter_trials(run_dir), cases, table)
    out = Path(out_path)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for chunk in render_html(header, summary, rows):
            f.write(chunk)
    tmp.replace(out)
    return summary
