"""One trial's spans, collected in the context that runs it: shared by every in-process
capture (OpenTelemetry's span processor and the OpenAI Agents SDK's trace processor)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agenteval.traces.logs import LogRecord, attach
from agenteval.traces.mapping import Trajectory, trajectory_from_spans
from agenteval.traces.records import SpanRecord

__all__ = ["SpanListTrial", "collect_spans"]


class SpanListTrial:
    """One trial's spans: SDK span objects a span processor appends (from the context that
    starts them), mapped to a trajectory on demand with ``record`` (SDK span → record)."""

    __slots__ = ("_record", "logs", "spans")

    def __init__(self, record: Callable[[Any], SpanRecord]) -> None:
        self.spans: list[Any] = []
        self.logs: list[LogRecord] = []
        self._record = record

    def trajectory(self) -> Trajectory:
        spans = [self._record(s) for s in list(self.spans)]
        logs = list(self.logs)
        return trajectory_from_spans(attach(spans, logs) if logs else spans)


@contextmanager
def collect_spans(
    current: contextvars.ContextVar[list[Any] | None],
    attached: bool,
    record: Callable[[Any], SpanRecord],
    logs: contextvars.ContextVar[list[LogRecord] | None] | None = None,
) -> Iterator[SpanListTrial]:
    """A trial's span list, set as ``current`` in this context until the block ends (and
    its log list as ``logs``, when given: records join their spans by id); when the
    processor is not ``attached`` nothing is set and the list stays empty."""
    t = SpanListTrial(record)
    if not attached:
        yield t
        return
    token = current.set(t.spans)
    log_token = logs.set(t.logs) if logs is not None else None
    try:
        yield t
    finally:
        if logs is not None and log_token is not None:
            logs.reset(log_token)
        current.reset(token)
