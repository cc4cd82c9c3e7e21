"""Spans into flight: from a request the moment it is durable, and from the write-ahead log
at start-up (**Restart** in :mod:`agenteval.monitor.service`).

:func:`add_spans` is the one way spans reach the traces in flight
(:class:`~agenteval.monitor.pending.Tracker`), counted in the monitor's
:class:`~agenteval.monitor.metrics.Metrics`. :class:`Replay` reads every valid frame of the
log back into flight after a restart (spans of traces in the done log skipped by the
tracker); when the replayed spans pass ``max_pending_spans`` it scores traces before the end
of the log to make room, as a tick would. :func:`damage` words what opening the log cut or
skipped.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from agenteval._util.say import Say
from agenteval.errors import FieldName, NamedText
from agenteval.monitor.journal import Journal
from agenteval.monitor.metrics import Metrics
from agenteval.monitor.pending import Tracker
from agenteval.monitor.staging import Staging
from agenteval.monitor.wal import KINDS, Logged, WriteAheadLog
from agenteval.monitor.writing import WindowSet
from agenteval.traces.logs import decode_logs_body
from agenteval.traces.otlp import decode_body
from agenteval.traces.records import SpanRecord

__all__ = ["Replay", "add_spans", "damage"]


def add_spans(
    tracker: Tracker,
    metrics: Metrics,
    spans: list[SpanRecord],
    segment: int,
    now: float,
    *,
    replay: bool = False,
) -> None:
    """Add ``spans`` (logged in ``segment``) to the traces in flight and count them. A
    replayed span was counted when it was sent (received, late or rejected): only the
    traces it begins count again (the counters start at 0 in a new process)."""
    before = len(tracker.pending)
    late, rejected = tracker.late_spans, tracker.rejected_spans
    tracker.add_spans(spans, segment, now)
    metrics.traces_received += len(tracker.pending) - before
    if not replay:
        metrics.spans += len(spans)
        metrics.late_spans += tracker.late_spans - late
        metrics.rejected_spans += tracker.rejected_spans - rejected
    else:  # spans of traces done before the restart, rejects counted when sent
        tracker.late_spans, tracker.rejected_spans = late, rejected


def damage(wal: WriteAheadLog) -> list[str]:
    """One line for the monitor's log for each thing opening ``wal`` cut or skipped: a torn
    tail, frames whose CRC did not match, segment tails unreadable as frames."""
    lines = []
    if wal.torn_bytes:
        lines.append(
            f"agenteval monitor: cut a torn tail of {wal.torn_bytes} bytes off the"
            " write-ahead log (a request never acknowledged)"
        )
    if wal.corrupt_frames:
        lines.append(
            f"agenteval monitor: skipped {wal.corrupt_frames} frame(s) of the write-ahead"
            f" log ({wal.corrupt_bytes} bytes) whose CRC did not match (a damaged disk or"
            " file): those requests, acknowledged or not, are lost; the frames after"
            " them were read"
        )
    for seq, n in wal.unreadable.items():
        lines.append(
            f"agenteval monitor: the last {n} bytes of write-ahead log segment {seq} cannot"
            " be read as frames (a damaged frame header); left on disk, not replayed"
        )
    return lines


@dataclass
class Replay:
    """The frames of the log back into flight (module docstring), with the monitor's parts."""

    tracker: Tracker
    staging: Staging
    store: WindowSet
    journal: Journal
    metrics: Metrics
    say: Say
    max_pending_spans: int

    def run(self, frames: Logged) -> None:
        """Replay ``frames`` (every valid frame of the log, in order)."""
        now = time.monotonic()
        spans = 0
        early: set[str] = set()
        for f in frames:
            if self.tracker.spans > self.max_pending_spans:
                early.update(self.make_room())
            signal, encoding = KINDS[f.kind].split("/")  # a valid frame's kind is known
            ctype = "application/json" if encoding == "json" else "application/x-protobuf"
            try:
                if signal == "traces":
                    got = decode_body(f.payload, ctype, "write-ahead log")
                    add_spans(self.tracker, self.metrics, got, f.segment, now, replay=True)
                    spans += len(got)
                    if early:  # spans of a trace scored early are late, and counted
                        self.metrics.late_spans += sum(1 for x in got if x.trace_id in early)
                else:
                    self.tracker.add_logs(decode_logs_body(f.payload, ctype), f.segment, now)
            except (ValueError, RecursionError):  # InputError included: checked when logged
                continue
        if frames:
            self.say(
                f"agenteval monitor: replayed {len(frames)} logged requests ({spans} spans);"
                f" {len(self.tracker.pending)} traces in flight"
            )
        if early:
            self.say(
                NamedText(
                    f"agenteval monitor: scored {len(early)} traces during the replay, before"
                    " the end of the log, to stay within ",
                    FieldName("max_pending_spans"),
                    f" {self.max_pending_spans}",
                )
            )

    def make_room(self) -> list[str]:
        """Over ``max_pending_spans``: score traces now to make room
        (:meth:`~agenteval.monitor.pending.Tracker.make_room`); their ids. Conversations
        are held and trials to judge start their judging, as in a tick."""
        taken = self.tracker.make_room(self.max_pending_spans // 2)
        items, held, notes = self.staging.map(taken, [])
        for note in notes[:5]:
            self.say(f"agenteval monitor: {note}")
        self.staging.hold(held, time.monotonic())
        try:
            asyncio.get_running_loop()
            ready = self.staging.judge_or_ready(items)
        except RuntimeError:  # open() outside serve(): no loop to judge on; written as is
            ready = items
        got = self.store.write(ready, self.journal)
        self.tracker.settled([t for i in ready for t in i.traces])
        self.metrics.count(got)
        return [t.trace_id for t in taken]
