"""The monitor's core: logged requests in, scored windows out, exactly once.

Data flow (one process, one event loop, one scoring thread):

1. :meth:`Monitor.ingest` (the HTTP handler's call) appends the request body to the
   write-ahead log (:mod:`agenteval.monitor.wal`) and, the moment it is durable, adds its
   spans to the traces in flight (:mod:`agenteval.monitor.pending`). The request is
   answered 200 after that.
2. Every ``tick_s`` the traces that are done are taken out of flight and handed to the
   scoring thread, which maps each to trials (:mod:`agenteval.monitor.mapping`). With
   ``--group conversation`` a trace of a conversation is held until the conversation is
   done (:mod:`agenteval.monitor.conversations`); with a judge, the trials are judged on
   the event loop (:mod:`agenteval.monitor.judging`) and written once judged. The
   scoring thread scores them and appends them to their windows
   (:mod:`agenteval.monitor.writing`), fsyncs the windows written, then appends the trace
   ids to the **done log** (``DIR/.monitor/done-<start>.log``, one id a line, fsync'd).
   Only then may the log segments holding those traces be deleted.
3. A window closes ``close_delay_s`` after its end and after the last trial written to it
   (every trace begun in it is done by then; traffic stamped with an old time, a backfill,
   keeps its window open while it flows; so does a conversation begun in it or a trial of
   it waiting for the judge): its summary is stored, its lock released, and it is gated
   (:mod:`agenteval.monitor.checking`, :mod:`agenteval.monitor.alerts`); the windows
   checked are listed in ``DIR/.monitor/checked.log``.

**Restart** (after a crash or SIGKILL): the done log is read
(:mod:`agenteval.monitor.journal`; a torn last line ignored), then every valid frame of
the write-ahead log is replayed into flight (:mod:`agenteval.monitor.replay`; spans of
done traces skipped), so every acknowledged span is scored once its trace is done again.
A trace whose trials reached its window before the crash but whose id did not reach the
done log is recognised by its window (:class:`~agenteval.monitor.windows.Window` keeps
the trace and span ids it holds) and not written twice. Windows left unfinished are closed
(and checked) at the first tick past their time; a window whose check was not recorded is
checked again, so an alert is sent at least once and, but for a crash between its line in
``alerts.jsonl`` and ``checked.log``, exactly once.

``DIR/.monitor`` is locked (:class:`~agenteval.rundir.lock.RunLock`): a second monitor on
the same ``DIR`` is refused (exit 2).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agenteval._util.say import Say, log_warning
from agenteval.errors import FieldName, InputError
from agenteval.monitor.checking import Checker
from agenteval.monitor.closing import Closer
from agenteval.monitor.config import MonitorConfig
from agenteval.monitor.conversations import Conversations
from agenteval.monitor.journal import Journal
from agenteval.monitor.judging import JudgeStage
from agenteval.monitor.metrics import Metrics
from agenteval.monitor.pending import Tracker
from agenteval.monitor.replay import Replay, add_spans, damage
from agenteval.monitor.staging import Staging
from agenteval.monitor.wal import KIND_OF, WriteAheadLog
from agenteval.monitor.windows import Window, check_layout
from agenteval.monitor.writing import Item, WindowSet
from agenteval.rundir.lock import RunLock
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.traces.logs import LogRecord
from agenteval.traces.records import SpanRecord

__all__ = ["Monitor", "MonitorConfig"]

STATE = ".monitor"
"""The monitor's own files under ``DIR``: ``wal/``, ``done-*.log``, ``checked.log``."""


class Monitor:
    """The core (module docstring): built by :meth:`open`, which replays the log."""

    def __init__(
        self,
        config: MonitorConfig,
        scorers: Scorers,
        say: Say = log_warning,
        judge: JudgeStage | None = None,
    ) -> None:
        self.config = config
        self.scorers = scorers
        self.judge = judge
        self._say = say
        self.state = config.out / STATE
        if config.replica is not None:
            self.state = self.state / config.replica
        self.metrics = Metrics()
        self.tracker = Tracker(
            idle_s=config.idle_s, max_wait_s=config.max_wait_s, horizon_s=config.horizon_s
        )
        judged = {"judge": judge.describe()} if judge is not None else {}
        self.store = WindowSet(
            config.out,
            config.window_s,
            scorers,
            mapping=config.mapping,
            settings={**config.settings, **judged},
            max_open=config.max_open_windows,
            extra_specs=judge.specs if judge is not None else None,
            replica=config.replica,
        )
        self.conversations = None
        if config.mapping.group == "conversation":
            c = config
            self.conversations = Conversations(
                idle_s=c.conversation_idle_s,
                max_wait_s=c.conversation_max_wait_s,
                horizon_s=c.horizon_s,
            )
        self.staging = Staging(config.mapping, say, judge=judge, conversations=self.conversations)
        self.staging.register(self.metrics)
        self.held_spans = 0
        """Spans held by conversations and by trials waiting for the judge (each tick)."""
        self.inflight_spans = 0
        self.on_alert: Callable[[dict[str, Any]], None] | None = None
        self.on_scored: Callable[[str, str, str, str, dict[str, Score]], None] | None = None
        """Told of each trial written: trace id, span id, case id, window, scores."""
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="agenteval-monitor")
        self._lock: RunLock | None = None
        self._journal = Journal(self.state, int(config.horizon_s))
        self._wal: WriteAheadLog | None = None
        self._busy = False
        self._write_failing = False
        self.checker = self._checker()
        self.closer = self._closer()

    def _closer(self) -> Closer:
        closer = Closer(
            self.store,
            self.checker,
            self.staging,
            self.metrics,
            self._say,
            self._pool,
            close_delay_s=self.config.close_delay_s,
        )
        closer.on_alert = self._alerted
        return closer

    def _alerted(self, rec: dict[str, Any]) -> None:
        if self.on_alert is not None:
            self.on_alert(rec)

    def _checker(self) -> Checker:
        c = self.config
        return Checker(
            c.out,
            c.window_s,
            self._journal,
            self._say,
            baseline=c.baseline,
            week_earlier=c.week_earlier,
            alpha_per_day=c.alpha_per_day,
            replica=c.replica,
        )

    @property
    def windows(self) -> dict[int, Window]:
        """The windows open (:class:`~agenteval.monitor.writing.WindowSet`)."""
        return self.store.open

    @property
    def parked(self) -> dict[int, float]:
        """The unfinished windows set aside."""
        return self.store.parked

    @property
    def wal(self) -> WriteAheadLog:
        assert self._wal is not None, "Monitor.open() first"
        return self._wal

    # -- start-up ---------------------------------------------------------------------

    def open(self) -> None:
        """Lock ``DIR/.monitor``, read the done log, replay the write-ahead log."""
        check_layout(self.config.out, self.config.replica)
        self.state.mkdir(parents=True, exist_ok=True)
        try:
            self._lock = RunLock.acquire(self.state, "agenteval monitor")
        except InputError:
            holder = RunLock.holder(self.state)
            if holder is None:
                raise
            raise InputError(
                (
                    f"is used by another agenteval monitor ({holder}); stop it, or give another ",
                    FieldName("out"),
                ),
                file=self.config.out,
            ) from None
        self._journal = Journal(self.state, int(self.config.horizon_s))
        self.checker = self._checker()
        self.closer = self._closer()
        self.tracker.remember(self._journal.done_ids(time.time()), time.monotonic())
        wal, frames = WriteAheadLog.open(
            self.state / "wal",
            segment_bytes=self.config.segment_bytes,
            max_bytes=self.config.max_wal_bytes,
            segment_s=self.config.segment_s,
        )
        self._wal = wal
        for line in damage(wal):
            self._say(line)
        replay = Replay(
            self.tracker,
            self.staging,
            self.store,
            self._journal,
            self.metrics,
            self._say,
            self.config.max_pending_spans,
        )
        replay.run(frames)
        self._release_segments()
        self.metrics.gauges.update(
            pending_traces=lambda: len(self.tracker.pending),
            pending_spans=lambda: self.tracker.spans,
            wal_segments=lambda: self.wal.depth,
            wal_bytes=lambda: self.wal.total_bytes,
            windows_open=lambda: self.closer.open_count,
            wal_corrupt_frames=lambda: self.wal.corrupt_frames,
        )

    # -- ingest -----------------------------------------------------------------------

    def over_memory(self, n: int) -> bool:
        """Whether ``n`` more spans would take the traces in flight over their bound (a
        request larger than the bound is taken when nothing else is in flight, so that
        its sender's retries can succeed)."""
        held = self.tracker.spans + self.inflight_spans + self.held_spans
        return held > 0 and held + n > self.config.max_pending_spans

    async def ingest_spans(self, body: bytes, json_body: bool, spans: list[SpanRecord]) -> None:
        """Log a decoded ``/v1/traces`` body; return once it is durable and its spans are
        in flight. Raises :class:`~agenteval.monitor.wal.WalFull`."""
        kind = KIND_OF["traces/json" if json_body else "traces/protobuf"]
        self.inflight_spans += len(spans)
        try:
            await self.wal.append(
                kind,
                body,
                lambda seg: add_spans(self.tracker, self.metrics, spans, seg, time.monotonic()),
            )
        finally:
            self.inflight_spans -= len(spans)

    async def ingest_logs(self, body: bytes, json_body: bool, records: list[LogRecord]) -> None:
        """Log a decoded ``/v1/logs`` body (as :meth:`ingest_spans`)."""
        kind = KIND_OF["logs/json" if json_body else "logs/protobuf"]
        self.inflight_spans += len(records)
        try:
            await self.wal.append(
                kind, body, lambda seg: self.tracker.add_logs(records, seg, time.monotonic())
            )
        finally:
            self.inflight_spans -= len(records)

    # -- the tick ---------------------------------------------------------------------

    async def tick(self) -> None:
        """Score the traces done by now, close the windows due (module docstring)."""
        if self._busy:
            return
        self._busy = True
        try:
            loop = asyncio.get_running_loop()
            now = time.monotonic()
            due = self.tracker.due(now)
            convs = self.staging.due(now)
            ready: list[Item] = []
            if due or convs:
                st = self.staging
                try:
                    items, held, notes = await loop.run_in_executor(self._pool, st.map, due, convs)
                except Exception:  # a bug: nothing is lost, the traces wait in flight
                    self.tracker.restore([*due, *(t for h in convs for t in h.traces)], now)
                    raise
                for note in notes[:5]:
                    self._say(f"agenteval monitor: {note}")
                st.hold(held, now)
                ready = st.judge_or_ready(items)
            ready += self.staging.judged()
            self.held_spans = self.staging.held_spans()
            if ready and not await self._write(ready):
                return
            wal = self.wal
            if (
                wal.sizes.get(wal.current)
                and not self.tracker.segment_refs.get(wal.current)
                and (wal.total_bytes > wal.max_bytes // 2 or wal.age_s >= wal.segment_s)
            ):  # nothing needs the current segment, and it is old or the log is filling up
                await wal.roll()
            self._release_segments()
            self.tracker.forget(time.monotonic())
            await self.closer.close_due()
        finally:
            self._busy = False

    async def _write(self, ready: list[Item]) -> bool:
        """Write the items ready in the scoring thread; False when the disk refused
        (nothing is lost: the traces wait in flight for the next tick)."""
        loop = asyncio.get_running_loop()
        traces = [t for i in ready for t in i.traces]
        try:
            got = await loop.run_in_executor(self._pool, self.store.write, ready, self._journal)
        except Exception as e:
            self.tracker.restore(traces, time.monotonic())
            if not isinstance(e, OSError | InputError):
                raise  # a bug: serve says so once and keeps ticking
            if not self._write_failing:
                why = e.strerror or e if isinstance(e, OSError) else e
                self._say(
                    f"agenteval monitor: cannot write the windows in {self.config.out}:"
                    f" {why}; retrying (nothing acknowledged is lost)"
                )
            self._write_failing = True
            return False
        self._write_failing = False
        self.tracker.settled(traces)
        if self.conversations is not None:
            held = [i.held for i in ready if i.held is not None]
            self.conversations.settled(held, time.monotonic())
        self.metrics.count(got)
        if self.on_scored is not None:
            for item in got.written:
                self.on_scored(*item)
        return True

    def _release_segments(self) -> None:
        wal = self.wal
        for seq in list(wal.sizes):
            if seq != wal.current and not self.tracker.segment_refs.get(seq):
                wal.release(seq)

    def reopen_unfinished(self) -> None:
        """At start-up (:meth:`~agenteval.monitor.checking.Checker.reopen_unfinished`)."""
        self.checker.reopen_unfinished(self.parked, self.windows)

    async def close(self) -> None:
        """Stop: release every window (unfinished ones stay unfinished: a restart closes
        them), the log and the lock. Traces in flight, held or being judged stay in the
        log (a restart scores them)."""
        await self.staging.close()
        await self.wal.close()
        self.store.release_all()
        self._pool.shutdown(wait=True)
        if self._lock is not None:
            self._lock.release()
