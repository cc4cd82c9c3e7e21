"""One unit of spans (an agent invocation, or a conversation) → one trial.

The rules (what the output, tool calls, usage, latency, failure and metadata are) are
those of ``import-traces`` (:mod:`agenteval.traces.importer`'s docstring, **trial**);
``agenteval monitor`` makes its trials with the same function.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agenteval._util.nanos import datetime_of
from agenteval.traces.conventions import normalise
from agenteval.traces.conventions.content import content_setting
from agenteval.traces.logs import LogRecord, attach
from agenteval.traces.mapping import tool_definitions, trajectory_from_spans
from agenteval.traces.messages import invocation_input, invocation_output
from agenteval.traces.records import SpanRecord
from agenteval.traces.units import Unit
from agenteval.trials.tool_errors import TOOL_ERRORS, tool_error_list
from agenteval.trials.trial import Failure, Latency, Trial, Usage
from agenteval.trials.unrecorded import NOT_RECORDED, NOT_RECORDED_REASON

__all__ = ["span_time", "unit_trial"]


def span_time(ns: int | None) -> datetime | None:
    """A span's time in nanoseconds as a UTC datetime; None when absent or out of range."""
    if ns is None:
        return None
    try:
        return datetime_of(ns)
    except ValueError:  # the decoders refuse such times; a span made in code may hold one
        return None


def _failure(root: SpanRecord) -> Failure | None:
    if root.status != "error":
        return None
    etype = root.attributes.get("error.type")
    if isinstance(etype, str) and etype:  # the semantic conventions' error class
        message = root.status_message or ""
        return Failure(cause=etype, message=message.removeprefix(f"{etype}: ").removeprefix(etype))
    exc = [e for e in root.events if e.name == "exception"]
    if exc:
        a = exc[-1].attributes
        etype = str(a.get("exception.type") or "Exception").rsplit(".", 1)[-1]
        msg = a.get("exception.message")
        return Failure(cause="agent_error", message=f"{etype}: {msg}" if msg else etype)
    return Failure(cause="agent_error", message=root.status_message or "error")


def _by_root(u: Unit) -> list[list[SpanRecord]]:
    """The unit's spans split by invocation root (a span goes to its nearest root)."""
    if len(u.roots) == 1:
        return [u.spans]
    ids = {r.span_id: i for i, r in enumerate(u.roots)}
    parent = {s.span_id: s.parent_id for s in u.spans}
    out: list[list[SpanRecord]] = [[] for _ in u.roots]
    for s in u.spans:
        p: str | None = s.span_id
        seen = 0
        while p is not None and p not in ids and seen < len(parent):
            p = parent.get(p)
            seen += 1
        out[ids[p] if p is not None and p in ids else 0].append(s)
    return out


def _exported_metadata(root: SpanRecord) -> dict[str, Any]:
    """The trial metadata ``export-otel`` put on the root span (``agenteval.trial.json``:
    a conversation's turns, the final database state), restored so the conversation
    scorers see what they saw in the run; anything else in it is ignored."""
    raw = root.attributes.get("agenteval.trial.json")
    try:
        got = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    if not isinstance(got, dict):
        return {}
    out = {k: got[k] for k in ("conversation", "state") if k in got}
    if isinstance(got.get("state_error"), str):
        out["state_error"] = got["state_error"]
    conv = out.get("conversation")
    if isinstance(conv, dict):  # usage that is not Usage would stop the run's summary
        holders = [t for t in conv.get("turns") or [] if isinstance(t, dict)]
        holders += [conv["user"]] if isinstance(conv.get("user"), dict) else []
        for h in holders:
            if "usage" in h:
                h["usage"] = _usages(h["usage"])
    return out


def _usages(raw: Any) -> list[Any]:
    """The entries of ``raw`` that are token usage (the others left out)."""
    kept = []
    for u in raw if isinstance(raw, list) else []:
        try:
            Usage.model_validate(u)
        except ValueError:
            continue
        kept.append(u)
    return kept


def _normalised(u: Unit, logs: Sequence[LogRecord] = ()) -> Unit:
    """``u`` with its log records joined (by span id) and its spans read into the
    canonical names (:mod:`agenteval.traces.conventions`)."""
    spans = normalise(attach(u.spans, logs) if logs else u.spans)
    by_id = {s.span_id: s for s in spans}
    roots = [by_id.get(r.span_id, r) for r in u.roots]
    return Unit(u.key, u.trace_id, roots, spans, u.conversation)


def unit_trial(u: Unit, logs: Sequence[LogRecord] = ()) -> tuple[Any, Trial]:
    """``(input or None, trial)`` for one unit (``logs``: log records that may belong to
    its spans); ``case_id`` is set by the caller."""
    missing: list[str] = []
    u = _normalised(u, logs)
    turns = _by_root(u)
    inputs: list[dict[str, Any]] = []
    output: str | None = None
    prompt_missing = False
    for i, (root, spans) in enumerate(zip(u.roots, turns, strict=True)):
        msgs = invocation_input(root, spans)
        if msgs is None:
            prompt_missing = True
        elif i == 0:
            inputs.extend(msgs)
        else:
            inputs.extend(m for m in msgs[-1:])  # this turn's question
        answer = invocation_output(root, spans)
        if i < len(u.roots) - 1:
            if answer is not None:
                inputs.append({"role": "assistant", "content": answer})
        else:
            output = answer
    traj = trajectory_from_spans(u.spans)
    if traj.tools is None:  # offered tools recorded on the agent span only
        traj.tools = tool_definitions(u.root.attributes) or None
    failure = _failure(u.roots[-1])
    if prompt_missing or not inputs:
        missing.append("input")
    if output is None and failure is None:
        missing.append("output")
    missing.extend(traj.metadata.get(NOT_RECORDED, []))
    start, end = u.start_ns, u.end_ns
    total = (end - start) / 1e9 if start is not None and end is not None and end >= start else None
    meta: dict[str, Any] = {"trace_id": u.trace_id, "span_id": u.root.span_id}
    service = u.root.resource.get("service.name")
    if isinstance(service, str):
        meta["service"] = service
    if u.conversation is not None:
        meta["conversation"] = u.conversation
    if len(u.roots) > 1:
        meta["invocations"] = len(u.roots)
    if missing:
        meta[NOT_RECORDED] = missing
        meta[NOT_RECORDED_REASON] = traj.metadata.get(NOT_RECORDED_REASON) or content_setting(
            u.spans
        )
    rules = tool_error_list(traj.tool_calls)
    if rules:
        meta[TOOL_ERRORS] = rules
    meta.update(_exported_metadata(u.root))
    trial = Trial(
        case_id="-",
        output=output,
        tool_calls=traj.tool_calls,
        usage=traj.usage,
        latency=Latency(total_s=total, active_s=traj.active_s),
        failure=failure,
        started_at=span_time(start),
        tools=traj.tools,
        metadata=meta,
    )
    case_input: Any = None
    if inputs:  # what was recorded, even when a turn's prompt was not
        only_user = len(inputs) == 1 and inputs[0]["role"] == "user"
        case_input = inputs[0]["content"] if only_user else inputs
    return case_input, trial
