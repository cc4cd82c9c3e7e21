"""Traces in flight: the spans received per trace id, and when a trace is done.

A trace is **done** when

- its root span (a span with no parent id) has arrived with an end time, and no span or
  log record of the trace arrived for ``idle_s``; or
- ``max_wait_s`` passed since its first span arrived, root or not (a trace whose root
  never comes: an exporter that dropped it, a root that is a child of a span in another
  service).

Times are the monitor's own clock (arrival), never the spans' timestamps: a sender's
clock cannot hold a trace open or close it early. After a restart the replayed spans
count as arriving at the restart.

A span without a trace id (missing, empty or all zeros: OTLP calls such an id invalid)
cannot be joined to a trace: it is **rejected** (counted, never kept), not made one trace
with every other span lacking an id.

A span (or log record) of a trace already done is **late**: counted, never added to a
trace, never scored. Done trace ids are remembered for ``horizon_s`` (the monitor gives
at least 10 minutes, :attr:`~agenteval.monitor.service.MonitorConfig.horizon_s`); a span
arriving later than that starts a new trace of that id, which is scored like any other
(its trial names the same trace id) unless its window already holds that unit.

Each trace also remembers which write-ahead-log segments hold its spans
(:attr:`PendingTrace.segments`): a segment may go once no trace in flight is in it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from agenteval.traces.logs import LogRecord
from agenteval.traces.records import SpanRecord

__all__ = ["PendingTrace", "Tracker"]


@dataclass(slots=True)
class PendingTrace:
    """The spans and log records received for one trace id."""

    trace_id: str
    first: float
    last: float
    spans: list[SpanRecord] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    segments: set[int] = field(default_factory=set)
    root_ended: bool = False


class Tracker:
    """The traces in flight and the ids of those done (module docstring)."""

    def __init__(self, *, idle_s: float, max_wait_s: float, horizon_s: float) -> None:
        self.idle_s = idle_s
        self.max_wait_s = max_wait_s
        self.horizon_s = horizon_s
        self.pending: dict[str, PendingTrace] = {}
        self.done: OrderedDict[str, float] = OrderedDict()
        """Done trace id → when it was done (oldest first)."""
        self.segment_refs: dict[int, int] = {}
        """Segment → how many traces in flight hold spans in it."""
        self.spans = 0
        """Spans and log records held by traces in flight (the memory bound counts them)."""
        self.late_spans = 0
        self.late_logs = 0
        self.rejected_spans = 0
        """Spans without a trace id (module docstring)."""

    def _trace(self, trace_id: str, segment: int, now: float) -> PendingTrace | None:
        if trace_id in self.done:
            return None
        t = self.pending.get(trace_id)
        if t is None:
            t = self.pending[trace_id] = PendingTrace(trace_id, now, now)
        if segment not in t.segments:
            t.segments.add(segment)
            self.segment_refs[segment] = self.segment_refs.get(segment, 0) + 1
        t.last = now
        return t

    def add_spans(self, spans: Iterable[SpanRecord], segment: int, now: float) -> None:
        """Add the spans of one logged request (from ``segment``); late ones are counted."""
        for s in spans:
            if not s.trace_id:
                self.rejected_spans += 1
                continue
            t = self._trace(s.trace_id, segment, now)
            if t is None:
                self.late_spans += 1
                continue
            t.spans.append(s)
            self.spans += 1
            if s.parent_id is None and s.end_ns is not None:
                t.root_ended = True

    def add_logs(self, records: Iterable[LogRecord], segment: int, now: float) -> None:
        """Add the log records of one logged request; those without a trace id are
        dropped (no trace to join), those of a done trace counted as late."""
        for r in records:
            if not r.trace_id:
                continue
            t = self._trace(r.trace_id, segment, now)
            if t is None:
                self.late_logs += 1
                continue
            t.logs.append(r)
            self.spans += 1

    def due(self, now: float) -> list[PendingTrace]:
        """Take the traces that are done by ``now`` out of flight (oldest first) and
        remember their ids. Their segments stay referenced until :meth:`settled`."""
        out = [
            t
            for t in self.pending.values()
            if (t.root_ended and now - t.last >= self.idle_s) or now - t.first >= self.max_wait_s
        ]
        for t in out:
            del self.pending[t.trace_id]
            self.spans -= len(t.spans) + len(t.logs)
            self.done[t.trace_id] = now
        return out

    def make_room(self, target: int) -> list[PendingTrace]:
        """Take traces out of flight until at most ``target`` spans are held, as :meth:`due`
        does (for a replay over the memory bound: the log after a restart may hold more
        than the bound allows in flight). Those whose root span has ended go first (their
        spans are most likely all there), oldest first, then the oldest of the others."""
        order = sorted(self.pending.values(), key=lambda t: (not t.root_ended, t.first))
        out: list[PendingTrace] = []
        now = max((t.last for t in order), default=0.0)
        for t in order:
            if self.spans <= target:
                break
            del self.pending[t.trace_id]
            self.spans -= len(t.spans) + len(t.logs)
            self.done[t.trace_id] = now
            out.append(t)
        return out

    def restore(self, traces: Iterable[PendingTrace], now: float) -> None:
        """Put traces taken by :meth:`due` back in flight (their scoring failed): they are
        due again at the next call (their first arrival is kept)."""
        for t in traces:
            self.done.pop(t.trace_id, None)
            t.last = now - self.idle_s
            self.pending[t.trace_id] = t
            self.spans += len(t.spans) + len(t.logs)

    def settled(self, traces: Iterable[PendingTrace]) -> None:
        """``traces`` are scored and durable: they no longer hold their segments."""
        for t in traces:
            for seg in t.segments:
                left = self.segment_refs[seg] - 1
                if left:
                    self.segment_refs[seg] = left
                else:
                    del self.segment_refs[seg]

    def remember(self, trace_ids: Iterable[str], when: float) -> None:
        """Trace ids done before a restart (read from disk)."""
        for tid in trace_ids:
            self.done[tid] = when

    def forget(self, now: float) -> None:
        """Forget done ids older than the horizon."""
        while self.done:
            when = next(iter(self.done.values()))
            if now - when < self.horizon_s:
                break
            self.done.popitem(last=False)
