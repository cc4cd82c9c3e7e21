"""Plain span data, the input of :mod:`agenteval.traces.mapping`, and its output.

Not SDK objects: a span exported anywhere (an OTLP file, a tracing backend's API) can be
written as a :class:`SpanRecord`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agenteval.trials.trial import ToolCall, Usage

__all__ = ["SpanEvent", "SpanRecord", "Trajectory"]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """One event recorded on a span (e.g. ``exception``)."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_ns: int | None = None
    body: Any = None
    """The body of an OTel log record joined to the span as an event (None for a span's
    own events)."""


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """A finished (or still open) span, as plain data.

    ``status`` is ``"unset"``, ``"ok"`` or ``"error"``; ``end_ns`` is None while open.
    Ids are lowercase hex (32 characters for a trace, 16 for a span).
    """

    name: str
    span_id: str
    trace_id: str = ""
    parent_id: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    status: str = "unset"
    status_message: str | None = None
    resource: Mapping[str, Any] = field(default_factory=dict)
    """Attributes of the resource that emitted the span (``service.name``...), when known."""


@dataclass(slots=True)
class Trajectory:
    """What a trial's spans (or any capture source) say the agent did."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    active_s: float | None = None
    token_details: dict[str, dict[str, int]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)  # put on the trial as is

    @property
    def empty(self) -> bool:
        """True when nothing was seen (no call, no usage, no model time)."""
        return not self.tool_calls and not self.usage and self.active_s is None


class BadSpan(Exception):
    """A malformed field of a span in a trace payload: ``path`` (dotted) and what is wrong.

    Raised by every decoder (OTLP JSON and protobuf, OpenInference JSON), so that one
    handler words the refusal whatever the format."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
