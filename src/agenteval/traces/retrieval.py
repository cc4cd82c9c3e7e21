"""Retriever spans as calls, and when a span failed: part of the span mapping
(:mod:`agenteval.traces.mapping`, whose docstring has the rules)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agenteval.traces.attributes import first, json_value
from agenteval.traces.records import SpanRecord
from agenteval.trials.tool_errors import mark
from agenteval.trials.trial import ToolCall

__all__ = ["UNFINISHED", "inside_tool", "retrieval_call", "span_error", "when"]

UNFINISHED = "unfinished: the trial ended before the call returned"


def span_error(s: SpanRecord) -> tuple[str, str] | None:
    """``(error, rule)`` of a span that failed (rules 1 and 2 of
    :mod:`agenteval.trials.tool_errors`), else None."""
    exc = [e for e in s.events if e.name == "exception"]
    if exc:
        a = exc[-1].attributes
        etype = str(a.get("exception.type") or "Exception").rsplit(".", 1)[-1]
        msg = a.get("exception.message")
        return (f"{etype}: {msg}" if msg else etype), "exception"
    if s.status == "error":
        return s.status_message or "error", "status"
    return None


def when(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)


def retrieval_call(s: SpanRecord) -> ToolCall:
    a = s.attributes
    docs: dict[int, dict[str, Any]] = {}
    prefix = "retrieval.documents."
    for k, v in a.items():
        if k.startswith(prefix):
            idx, _, rest = k[len(prefix) :].partition(".")
            if idx.isdigit() and rest.startswith("document."):
                docs.setdefault(int(idx), {})[rest.removeprefix("document.")] = json_value(v)
    failed = span_error(s) if s.end_ns is not None else (UNFINISHED, "")
    found, query = first(a, ("input.value", "gen_ai.prompt"))
    dur = None
    if s.start_ns is not None and s.end_ns is not None:
        dur = max(0.0, (s.end_ns - s.start_ns) / 1e9)
    call = ToolCall(
        name=s.name,
        arguments={"query": json_value(query)} if found else {},
        result=None if failed else [docs[i] for i in sorted(docs)],
        error=failed[0] if failed else None,
        started_at=when(s.start_ns),
        duration_s=dur,
    )
    return mark(call, failed[1]) if failed and failed[1] else call


def inside_tool(s: SpanRecord, kinds: dict[str, str], parents: dict[str, str | None]) -> bool:
    seen = {s.span_id}
    p = s.parent_id
    while p is not None and p not in seen:
        if kinds.get(p) == "tool":
            return True
        seen.add(p)
        p = parents.get(p)
    return False
