"""What the trial page shows of one trial: plain values ready for the template.

Every string here comes from a run and is untrusted; the templates escape all of it
(jinja2 autoescape), so nothing here builds HTML.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agenteval.cases.case import Case
from agenteval.rundir import TrialRecord

MAX_TEXT = 200_000
"""Longer values are cut (with a note) so one huge tool result cannot stall the page."""


def as_text(value: Any) -> str:
    """A string as is; anything else as indented JSON. Cut at :data:`MAX_TEXT`."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters not shown)"
    return text


@dataclass
class ToolStep:
    """One tool call in the timeline."""

    n: int
    name: str
    arguments: str
    arguments_valid: bool
    result: str
    error: str | None
    at_s: float | None
    duration_s: float | None
    call_id: str | None


@dataclass
class ScoreLine:
    name: str
    status: str
    value: float | None
    threshold: float
    reason: str
    error: str | None
    judge: bool
    tokens: str


@dataclass
class Message:
    role: str
    text: str


@dataclass
class TrialDetail:
    """One trial, as the trial page (and each side of a comparison) shows it."""

    index: int
    case_id: str
    repeat: int
    output: str | None
    input: str | None
    expected: str | None
    tags: tuple[str, ...]
    failure: tuple[str, str] | None
    latency_total: float | None
    latency_active: float | None
    started_at: datetime | None
    usage: list[tuple[str, int, int]]
    retries: list[tuple[str, float, str]]
    messages: list[Message] = field(default_factory=list)
    tools: list[ToolStep] = field(default_factory=list)
    scores: list[ScoreLine] = field(default_factory=list)
    raw: str = ""


def _offset(t0: datetime | None, t: datetime | None) -> float | None:
    if t0 is None or t is None:
        return None
    try:
        return (t - t0).total_seconds()
    except TypeError:  # one naive, one aware
        return None


def trial_detail(
    index: int, rec: TrialRecord, raw: bytes, case: Case | None, tags: tuple[str, ...]
) -> TrialDetail:
    """The :class:`TrialDetail` of a stored trial (``raw``: its line, shown as JSON)."""
    try:
        raw_text = json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except ValueError:
        raw_text = raw.decode("utf-8", "replace")
    d = TrialDetail(
        index=index,
        case_id=rec.case_id,
        repeat=rec.repeat,
        output=rec.output,
        input=as_text(case.input) if case is not None else None,
        expected=as_text(case.expected) if case is not None and case.expected is not None else None,
        tags=tags,
        failure=(rec.failure.cause, rec.failure.message) if rec.failure else None,
        latency_total=rec.latency.total_s,
        latency_active=rec.latency.active_s,
        started_at=rec.started_at,
        usage=[(u.model or "?", u.input_tokens, u.output_tokens) for u in rec.usage],
        retries=[(r.reason, r.wait_s, r.detail or "") for r in rec.retries],
        raw=as_text(raw_text),
    )
    for m in rec.messages or []:
        role = str(m.get("role", "?")) if isinstance(m, dict) else "?"
        content = m.get("content") if isinstance(m, dict) else m
        extra = (
            {k: v for k, v in m.items() if k not in ("role", "content")}
            if isinstance(m, dict)
            else {}
        )
        text = as_text(content) if content is not None else ""
        if extra:
            text = (text + "\n" if text else "") + as_text(extra)
        d.messages.append(Message(role, text))
    for n, c in enumerate(rec.tool_calls, 1):
        d.tools.append(
            ToolStep(
                n=n,
                name=c.name,
                arguments=as_text(c.arguments),
                arguments_valid=c.arguments_valid_json,
                result=as_text(c.result) if c.result is not None else "",
                error=c.error,
                at_s=_offset(rec.started_at, c.started_at),
                duration_s=c.duration_s,
                call_id=c.id,
            )
        )
    for name, s in rec.scores.items():
        tokens = ", ".join(
            f"{u.model or '?'}: {u.input_tokens} in / {u.output_tokens} out" for u in s.usage
        )
        d.scores.append(
            ScoreLine(
                name, s.status, s.value, s.threshold, s.reason, s.error, bool(s.usage), tokens
            )
        )
    return d
