"""What the recording proxy saw of one model call, and the trajectory many calls make.

Pure: no sockets. :mod:`agenteval.traces.proxy_wire` reads the bytes the proxy forwards
into a :class:`ModelCall`: the model, token usage, the tool calls the model requested
and the tool outputs the agent sent back (what is read, exactly, is in its docstring).

**Errors.** The model APIs have no error flag on a tool output: the proxy sees text. A
tool output is recorded as the call's ``error`` (and no ``result``) when its text is
shaped like an error — it starts with ``Error:`` (what LangGraph's ``ToolNode`` sends,
and the convention to use in your own loop), ``An error occurred while running the
tool`` (the OpenAI Agents SDK's default), ``RuntimeError: ``... — by the rule span
capture and transcripts use too (:mod:`agenteval.trials.tool_errors`, rule ``text``);
any other output is the call's ``result``, kept as text. A tool result that happens to
start with ``Error:`` is recorded as an error.

:func:`trajectory_from_calls` turns one trial's calls into a
:class:`~agenteval.traces.records.Trajectory` (rules in its docstring);
:func:`read_recording` does it for an ``agenteval proxy --out`` file, per label.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agenteval.errors import InputError
from agenteval.traces.records import Trajectory
from agenteval.trials.tool_errors import error_text_prefix, mark
from agenteval.trials.trial import CachedCall, ToolCall, Usage

__all__ = [
    "ModelCall",
    "RequestedCall",
    "ToolOutput",
    "is_error_text",
    "read_recording",
    "trajectory_from_calls",
]


def is_error_text(content: Any) -> bool:
    """True when a tool output's text marks an error (module docstring)."""
    return error_text_prefix(content) is not None


@dataclass(slots=True)
class RequestedCall:
    """A tool call the model asked for: ``arguments`` as the raw JSON text it sent."""

    id: str | None
    name: str
    arguments: str = ""


@dataclass(slots=True)
class ToolOutput:
    """What the agent sent back for one call."""

    call_id: str | None
    content: Any


@dataclass(slots=True)
class ModelCall:
    """One request through the proxy (module docstring). Times: ``started_at`` (wall
    clock) and ``latency_s`` (until the last response byte; None while in flight)."""

    api: str  # "chat", "responses" or "other"
    path: str
    started_at: datetime
    label: str = ""
    status: int | None = None
    latency_s: float | None = None
    stream: bool = False
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, int] = field(default_factory=dict)
    requested: list[RequestedCall] = field(default_factory=list)
    outputs: list[ToolOutput] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    unparsed: str | None = None
    error: str | None = None
    cached: bool = False
    """Answered from the replay cache (nothing was sent upstream)."""

    @property
    def ended_at(self) -> datetime | None:
        """When the last response byte arrived."""
        if self.latency_s is None:
            return None
        return self.started_at + timedelta(seconds=self.latency_s)

    def summary(self) -> dict[str, Any]:
        """The short form kept on a trial (``metadata.model_calls``): no message content."""
        out: dict[str, Any] = {"api": self.api, "model": self.model, "status": self.status}
        out["stream"] = self.stream
        out["latency_s"] = None if self.latency_s is None else round(self.latency_s, 6)
        if self.input_tokens is not None or self.output_tokens is not None:
            out["input_tokens"] = self.input_tokens or 0
            out["output_tokens"] = self.output_tokens or 0
        out["tool_calls"] = [c.name for c in self.requested]
        for key in ("unparsed", "error"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.cached:
            out["cached"] = True
        return out

    def as_cached(self) -> CachedCall:
        """The call as a trial's ``cached`` lists it."""
        return CachedCall(
            model=self.model,
            input_tokens=self.input_tokens or 0,
            output_tokens=self.output_tokens or 0,
        )

    def to_json(self) -> dict[str, Any]:
        """Everything, as one line of ``agenteval proxy --out`` (read back by
        :meth:`from_json`)."""
        out = self.summary()
        out = {"label": self.label, "path": self.path, **out}
        out["started_at"] = self.started_at.isoformat()
        out["details"] = self.details
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.requested
        ]
        out["tool_outputs"] = [{"call_id": o.call_id, "content": o.content} for o in self.outputs]
        out["tools"] = self.tools
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelCall:
        """The call :meth:`to_json` wrote."""
        return cls(
            api=str(data.get("api", "other")),
            path=str(data.get("path", "")),
            started_at=datetime.fromisoformat(str(data["started_at"])),
            label=str(data.get("label", "")),
            status=data.get("status"),
            latency_s=data.get("latency_s"),
            stream=bool(data.get("stream")),
            cached=data.get("cached") is True,
            model=data.get("model"),
            input_tokens=data.get("input_tokens"),
            output_tokens=data.get("output_tokens"),
            details=dict(data.get("details") or {}),
            requested=[RequestedCall(**c) for c in data.get("tool_calls") or []],
            outputs=[ToolOutput(**o) for o in data.get("tool_outputs") or []],
            tools=list(data.get("tools") or []),
            unparsed=data.get("unparsed"),
            error=data.get("error"),
        )


def trajectory_from_calls(calls: Iterable[ModelCall]) -> Trajectory:
    """One trial's model calls → its trajectory.

    - ``tool_calls``: every call a model requested, in the order the responses arrived
      (a call id seen again is the same call); ``arguments`` parsed from the JSON text
      (kept as the text when invalid); ``result`` or ``error`` from the first tool output
      carrying its id in a later request (module docstring for which one it is); a call
      no request answered has neither. ``started_at`` is when the model's response ended
      and ``duration_s`` the time until the request bringing its output began (an upper
      bound on the tool's own time: it includes the agent's work in between).
    - ``usage``: tokens summed per model (the response's model, else the request's);
      ``token_details``: cached and reasoning tokens per model.
    - ``active_s``: the union of the calls' request-to-last-byte intervals.
    - ``tools``: the tool definitions the requests offered (first of a name wins).
    - ``metadata["model_calls"]``: :meth:`ModelCall.summary` of every call, in order.
    """
    ordered = sorted(calls, key=lambda c: c.started_at)
    t = Trajectory()
    found: dict[str, ToolCall] = {}
    ends: dict[int, datetime] = {}
    answered: set[int] = set()
    tool_names: set[str] = set()
    for mc in ordered:
        for out in mc.outputs:  # outputs first: a request answers calls made before it
            tc = found.get(out.call_id or "")
            if tc is None or id(tc) in answered:
                continue
            answered.add(id(tc))
            prefix = error_text_prefix(out.content)
            if prefix is not None:
                tc.error = str(out.content)
                mark(tc, "text", prefix)
            else:
                tc.result = out.content
            start = ends.get(id(tc))
            if start is not None and mc.started_at >= start:
                tc.duration_s = (mc.started_at - start).total_seconds()
        for d in mc.tools:
            if d["name"] not in tool_names:
                tool_names.add(d["name"])
                t.tools = [*(t.tools or []), d]
        for rc in mc.requested:
            if rc.id is not None and rc.id in found:
                continue
            tc = ToolCall.model_validate(
                {"id": rc.id, "name": rc.name, "arguments": rc.arguments or "{}"}
            )
            tc.started_at = mc.ended_at.astimezone(UTC) if mc.ended_at else None
            if mc.ended_at is not None:
                ends[id(tc)] = mc.ended_at
            t.tool_calls.append(tc)
            if rc.id is not None:
                found[rc.id] = tc
        _add_usage(t, mc)
    t.active_s = _union([(c.started_at, c.ended_at) for c in ordered if c.ended_at is not None])
    t.metadata["model_calls"] = [c.summary() for c in ordered if c.api != "other"]
    if not t.metadata["model_calls"]:
        del t.metadata["model_calls"]
    return t


def _add_usage(t: Trajectory, mc: ModelCall) -> None:
    if mc.input_tokens is None and mc.output_tokens is None:
        return
    model = mc.model
    for name, n in mc.details.items():
        d = t.token_details.setdefault(model or "", {})
        d[name] = d.get(name, 0) + n
    for u in t.usage:
        if u.model == model:
            u.input_tokens += mc.input_tokens or 0
            u.output_tokens += mc.output_tokens or 0
            return
    t.usage.append(
        Usage(model=model, input_tokens=mc.input_tokens or 0, output_tokens=mc.output_tokens or 0)
    )


def _union(spans: list[tuple[datetime, datetime | None]]) -> float | None:
    total = 0.0
    end: datetime | None = None
    for a, b in sorted((a, b) for a, b in spans if b is not None):
        if end is None or a > end:
            total += (b - a).total_seconds()
            end = b
        elif b > end:
            total += (b - end).total_seconds()
            end = b
    return total if spans else None


def read_recording(path: str | Path) -> dict[str, Trajectory]:
    """An ``agenteval proxy --out`` file → one trajectory per label
    (:func:`trajectory_from_calls`), labels in the order first seen. Raises InputError
    naming the file and line for a line that is not a recorded call."""
    groups: dict[str, list[ModelCall]] = {}
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InputError(f"cannot read the proxy recording: {e.strerror or e}", file=p) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            call = ModelCall.from_json(json.loads(line))
        except (ValueError, TypeError, KeyError) as e:
            raise InputError(f"not a recorded model call ({e})", file=p, line=n) from None
        groups.setdefault(call.label, []).append(call)
    return {label: trajectory_from_calls(calls) for label, calls in groups.items()}
