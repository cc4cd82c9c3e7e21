"""The monitor's core: logged requests in, scored windows out, exactly once.

Data flow (one process, one event loop, one scoring thread):

1. :meth:`Monitor.ingest` (the HTTP handler's call) appends the request body to the
   write-ahead log (:mod:`agenteval.monitor.wal`) and, the moment it is durable, adds its
   spans to the traces in flight (:mod:`agenteval.monitor.pending`). The request is
   answered 200 after that.
2. Every ``tick_s`` the traces that are done are taken out of flight and handed to the
   scoring thread, which maps each to trials (:mod:`agenteval.monitor.mapping`), scores
   them and appends them to their windows (:mod:`agenteval.monitor.windows`), fsyncs the
   windows written, then appends the trace ids to the **done log**
   (``DIR/.monitor/done-<start>.log``, one id a line, fsync'd). Only then may the log
   segments holding those traces be deleted.
3. A window closes ``close_delay_s`` after its end and after the last trial written to it
   (every trace begun in it is done by then; traffic stamped with an old time, a backfill,
   keeps its window open while it flows): its summary is stored, its lock released, and
   with a baseline it is checked
   (:mod:`agenteval.monitor.alerts`); the windows checked are listed in
   ``DIR/.monitor/checked.log``.

**Restart** (after a crash or SIGKILL): the done log is read
(:mod:`agenteval.monitor.journal`; a torn last line ignored),
then every valid frame of the write-ahead log is replayed into flight (spans of done
traces skipped), so every acknowledged span is scored once its trace is done again. A
trace whose trials reached its window before the crash but whose id did not reach the
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
import contextlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval._util.say import Say, log_warning
from agenteval.errors import InputError
from agenteval.monitor import alerts
from agenteval.monitor.journal import Journal, append_lines
from agenteval.monitor.mapping import MapOptions, trace_trials
from agenteval.monitor.metrics import Metrics
from agenteval.monitor.pending import PendingTrace, Tracker
from agenteval.monitor.wal import Logged, WriteAheadLog
from agenteval.monitor.windows import (
    Window,
    check_layout,
    close_at,
    far_ahead,
    window_dirs,
    window_header,
    window_name,
    window_start,
)
from agenteval.rundir import read_header
from agenteval.rundir.lock import RunLock
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.traces.logs import LogRecord, decode_logs_body
from agenteval.traces.otlp import decode_body
from agenteval.traces.records import SpanRecord

__all__ = ["Monitor", "MonitorConfig"]

STATE = ".monitor"
"""The monitor's own files under ``DIR``: ``wal/``, ``done-*.log``, ``checked.log``."""
JSON_KINDS = {"traces": 1, "logs": 3}
Written = tuple[str, str, str, str, dict[str, Score]]
"""A trial written: its trace id, root span id, case id, window name and scores."""
PROTOBUF_KINDS = {"traces": 2, "logs": 4}


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    """Everything ``agenteval monitor`` is told (docs/monitor.md has the defaults)."""

    out: Path
    window_s: int = 3600
    idle_s: float = 5.0
    max_wait_s: float = 300.0
    max_pending_spans: int = 1_000_000
    max_wal_bytes: int = 1 << 30
    segment_bytes: int = 64 << 20
    segment_s: float = 60.0
    tick_s: float = 0.2
    max_open_windows: int = 16
    """Windows held open at once (each holds three file descriptors and its ids); beyond,
    the least recently written is set aside unfinished (:attr:`Monitor.parked`)."""
    mapping: MapOptions = field(default_factory=MapOptions)
    baseline: Path | None = None
    alpha_per_day: float = 0.05
    settings: dict[str, Any] = field(default_factory=dict)
    replica: str | None = None
    """``--replica NAME``: this monitor writes shard NAME of each window, its own files in
    ``DIR/.monitor/NAME`` (:mod:`agenteval.monitor.windows`)."""

    @property
    def horizon_s(self) -> float:
        """How long done trace ids are remembered: at least 10 minutes, and past the life
        of any log segment that may hold their spans (so a replay after a restart never
        mistakes a scored trace for a new one; the windows' own record is the second
        guard)."""
        return max(600.0, 2 * (self.max_wait_s + self.segment_s + self.idle_s))

    @property
    def close_delay_s(self) -> float:
        """How long after its end a window closes."""
        return self.max_wait_s + self.idle_s + 2 * self.tick_s


@dataclass(slots=True)
class _Scored:
    """What the scoring thread reports back for one tick."""

    written: list[Written] = field(default_factory=list)
    scored: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    replayed: int = 0
    notes: list[str] = field(default_factory=list)


class Monitor:
    """The core (module docstring): built by :meth:`open`, which replays the log."""

    def __init__(self, config: MonitorConfig, scorers: Scorers, say: Say = log_warning) -> None:
        self.config = config
        self.scorers = scorers
        self._say = say
        self.state = config.out / STATE
        if config.replica is not None:
            self.state = self.state / config.replica
        self.metrics = Metrics()
        self.tracker = Tracker(
            idle_s=config.idle_s, max_wait_s=config.max_wait_s, horizon_s=config.horizon_s
        )
        self.windows: dict[int, Window] = {}
        self.parked: dict[int, float] = {}
        """Unfinished windows set aside (files closed, lock released: traffic stamped
        with many different hours must not exhaust the file descriptors): start → when a
        trial was last written to it. Taken up again when a trial comes for it, or to
        close it when it is due."""
        self.inflight_spans = 0
        self.on_alert: Callable[[dict[str, Any]], None] | None = None
        self.on_scored: Callable[[str, str, str, str, dict[str, Score]], None] | None = None
        """Told of each trial written: trace id, span id, case id, window, scores."""
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="agenteval-monitor")
        self._lock: RunLock | None = None
        self._journal = Journal(self.state, int(config.horizon_s))
        self._wal: WriteAheadLog | None = None
        self._alpha = alerts.window_alpha(config.alpha_per_day, config.window_s)
        self._busy = False
        self._write_failing = False

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
                f"is used by another agenteval monitor ({holder}); stop it, or give another --out",
                file=self.config.out,
            ) from None
        self._journal = Journal(self.state, int(self.config.horizon_s))
        self.tracker.remember(self._journal.done_ids(time.time()), time.monotonic())
        wal, frames = WriteAheadLog.open(
            self.state / "wal",
            segment_bytes=self.config.segment_bytes,
            max_bytes=self.config.max_wal_bytes,
            segment_s=self.config.segment_s,
        )
        self._wal = wal
        if wal.torn_bytes:
            self._say(
                f"agenteval monitor: cut a torn tail of {wal.torn_bytes} bytes off the"
                " write-ahead log (a request never acknowledged)"
            )
        if wal.corrupt_frames:
            self._say(
                f"agenteval monitor: skipped {wal.corrupt_frames} frame(s) of the write-ahead"
                f" log ({wal.corrupt_bytes} bytes) whose CRC did not match (a damaged disk or"
                " file): those requests, acknowledged or not, are lost; the frames after"
                " them were read"
            )
        for seq, n in wal.unreadable.items():
            self._say(
                f"agenteval monitor: the last {n} bytes of write-ahead log segment {seq} cannot"
                " be read as frames (a damaged frame header); left on disk, not replayed"
            )
        self._replay(frames)
        self._release_segments()
        self.metrics.gauges.update(
            pending_traces=lambda: len(self.tracker.pending),
            pending_spans=lambda: self.tracker.spans,
            wal_segments=lambda: self.wal.depth,
            wal_bytes=lambda: self.wal.total_bytes,
            wal_corrupt_frames=lambda: self.wal.corrupt_frames,
        )

    def _replay(self, frames: Logged) -> None:
        now = time.monotonic()
        spans = 0
        early: set[str] = set()
        for f in frames:
            if self.tracker.spans > self.config.max_pending_spans:
                early.update(self._make_room())
            signal = "traces" if f.kind in (1, 2) else "logs"
            ctype = "application/json" if f.kind in (1, 3) else "application/x-protobuf"
            try:
                if signal == "traces":
                    got = decode_body(f.payload, ctype, "write-ahead log")
                    self._add_spans(got, f.segment, now, replay=True)
                    spans += len(got)
                    if early:  # spans of a trace scored early are late, and counted
                        self.metrics.late_spans += sum(1 for x in got if x.trace_id in early)
                else:
                    self.tracker.add_logs(decode_logs_body(f.payload, ctype), f.segment, now)
            except (ValueError, RecursionError):  # InputError included: checked when logged
                continue
        if frames:
            self._say(
                f"agenteval monitor: replayed {len(frames)} logged requests ({spans} spans);"
                f" {len(self.tracker.pending)} traces in flight"
            )
        if early:
            self._say(
                f"agenteval monitor: scored {len(early)} traces during the replay, before the"
                f" end of the log, to stay within --max-pending-spans"
                f" {self.config.max_pending_spans}"
            )

    def _make_room(self) -> list[str]:
        """During the replay, over ``--max-pending-spans``: score traces now to make room
        (:meth:`~agenteval.monitor.pending.Tracker.make_room`); their ids."""
        taken = self.tracker.make_room(self.config.max_pending_spans // 2)
        got = self._score(taken)
        self.tracker.settled(taken)
        self._count(got)
        return [t.trace_id for t in taken]

    # -- ingest -----------------------------------------------------------------------

    def _add_spans(
        self, spans: list[SpanRecord], segment: int, now: float, *, replay: bool = False
    ) -> None:
        before = len(self.tracker.pending)
        late, rejected = self.tracker.late_spans, self.tracker.rejected_spans
        self.tracker.add_spans(spans, segment, now)
        self.metrics.traces_received += len(self.tracker.pending) - before
        if not replay:
            self.metrics.spans += len(spans)
            self.metrics.late_spans += self.tracker.late_spans - late
            self.metrics.rejected_spans += self.tracker.rejected_spans - rejected
        else:  # spans of traces done before the restart, rejects counted when sent
            self.tracker.late_spans, self.tracker.rejected_spans = late, rejected

    def over_memory(self, n: int) -> bool:
        """Whether ``n`` more spans would take the traces in flight over their bound (a
        request larger than the bound is taken when nothing else is in flight, so that
        its sender's retries can succeed)."""
        held = self.tracker.spans + self.inflight_spans
        return held > 0 and held + n > self.config.max_pending_spans

    async def ingest_spans(self, body: bytes, json_body: bool, spans: list[SpanRecord]) -> None:
        """Log a decoded ``/v1/traces`` body; return once it is durable and its spans are
        in flight. Raises :class:`~agenteval.monitor.wal.WalFull`."""
        kind = (JSON_KINDS if json_body else PROTOBUF_KINDS)["traces"]
        self.inflight_spans += len(spans)
        try:
            await self.wal.append(
                kind, body, lambda seg: self._add_spans(spans, seg, time.monotonic())
            )
        finally:
            self.inflight_spans -= len(spans)

    async def ingest_logs(self, body: bytes, json_body: bool, records: list[LogRecord]) -> None:
        """Log a decoded ``/v1/logs`` body (as :meth:`ingest_spans`)."""
        kind = (JSON_KINDS if json_body else PROTOBUF_KINDS)["logs"]
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
            due = self.tracker.due(time.monotonic())
            if due:
                try:
                    got = await loop.run_in_executor(self._pool, self._score, due)
                except Exception as e:  # nothing is lost: the traces wait for the next tick
                    self.tracker.restore(due, time.monotonic())
                    if not isinstance(e, OSError | InputError):
                        raise  # a bug: serve says so once and keeps ticking
                    if not self._write_failing:
                        why = e.strerror or e if isinstance(e, OSError) else e
                        self._say(
                            f"agenteval monitor: cannot write the windows in"
                            f" {self.config.out}: {why}; retrying (nothing"
                            " acknowledged is lost)"
                        )
                    self._write_failing = True
                    return
                self._write_failing = False
                self.tracker.settled(due)
                self._count(got)
                for note in got.notes[:5]:
                    self._say(f"agenteval monitor: {note}")
                if self.on_scored is not None:
                    for item in got.written:
                        self.on_scored(*item)
            wal = self.wal
            if (
                wal.sizes.get(wal.current)
                and not self.tracker.segment_refs.get(wal.current)
                and (wal.total_bytes > wal.max_bytes // 2 or wal.age_s >= wal.segment_s)
            ):  # nothing needs the current segment, and it is old or the log is filling up
                await wal.roll()
            self._release_segments()
            now = time.time()
            self.tracker.forget(time.monotonic())
            delay, ws = self.config.close_delay_s, self.config.window_s
            closing: list[Window | int] = [
                w
                for w in self.windows.values()
                if now >= close_at(w.start, ws, w.last_write, delay, now)
            ]
            closing += [
                s for s, last in self.parked.items() if now >= close_at(s, ws, last, delay, now)
            ]
            for w in closing:
                if isinstance(w, Window):
                    del self.windows[w.start]
                else:  # set aside: taken up again, then closed (one at a time)
                    self.parked.pop(w)
                name = window_name(w.start if isinstance(w, Window) else w, ws)
                try:
                    rec = await loop.run_in_executor(self._pool, self._close, w)
                except (OSError, InputError) as e:  # the window stays as written; said once
                    self._say(f"agenteval monitor: window {name} not closed cleanly: {e}")
                    continue
                self.metrics.windows_closed += 1
                if rec is not None:
                    self.metrics.alerts += 1
                    self._say(alerts.alert_line(rec))
                    if self.on_alert is not None:
                        self.on_alert(rec)
        finally:
            self._busy = False

    def _count(self, got: _Scored) -> None:
        m = self.metrics
        m.traces_scored += got.scored
        m.replayed += got.replayed
        for reason, n in got.dropped.items():
            m.traces_dropped[reason] = m.traces_dropped.get(reason, 0) + n
        for *_, scores in got.written:
            m.scored(scores)

    def _release_segments(self) -> None:
        wal = self.wal
        for seq in list(wal.sizes):
            if seq != wal.current and not self.tracker.segment_refs.get(seq):
                wal.release(seq)

    def _window(self, start: int) -> Window:
        w = self.windows.get(start)
        if w is None:
            while len(self.windows) >= self.config.max_open_windows:  # set the least recent aside
                old = min(self.windows.values(), key=lambda x: x.last_write)
                del self.windows[old.start]
                self.parked[old.start] = old.last_write
                old.close(None)  # synced first: what it holds is durable
            settings = {
                **self.config.settings,
                "window_s": self.config.window_s,
                "window_start": start,
            }
            header = window_header(settings, self.scorers)
            keep = self.config.mapping.case_id_attr is not None
            w = Window.open(
                self.config.out,
                start,
                self.config.window_s,
                header,
                keep_cases=keep,
                replica=self.config.replica,
            )
            w.last_write = self.parked.pop(start, 0.0)
            self.windows[start] = w
        return w

    def _score(self, traces: list[PendingTrace]) -> _Scored:
        """In the scoring thread: map, score, write, sync, record done (module docstring).

        A trace the mapping cannot read (a value no decoder check caught) is dropped with
        a line. An OSError (the disk refused a window's write) closes the windows written
        (a reopen cuts any torn line) and is raised: the caller puts the traces back."""
        got = _Scored()
        touched: dict[int, Window] = {}
        try:
            for t in traces:
                try:
                    made, filtered, _skipped = trace_trials(t.spans, t.logs, self.config.mapping)
                except (InputError, ValueError, RecursionError) as e:
                    got.dropped["unreadable"] = got.dropped.get("unreadable", 0) + 1
                    got.notes.append(f"trace {t.trace_id} cannot be made a trial ({e})")
                    continue
                if not made:
                    reason = "where" if filtered else "no unit"
                    got.dropped[reason] = got.dropped.get(reason, 0) + 1
                    continue
                got.scored += 1
                for m in made:
                    at = m.start_ns / 1e9 if m.start_ns is not None else time.time()
                    w = self._window(window_start(at, self.config.window_s))
                    touched[w.start] = w
                    if w.holds(m):
                        got.replayed += 1
                        continue
                    scores = w.add(m, self.scorers)
                    meta = m.trial.metadata
                    got.written.append(
                        (meta["trace_id"], meta["span_id"], m.case.id, w.name, scores)
                    )
            for w in touched.values():
                if self.windows.get(w.start) is w:  # else set aside, and synced then
                    w.sync()
            self._journal.add_done((t.trace_id for t in traces), time.time())
        except OSError:
            for w in touched.values():
                self.windows.pop(w.start, None)
                with contextlib.suppress(Exception):
                    w.close(None)
            raise
        return got

    def _close(self, w: Window | int) -> dict[str, Any] | None:
        """In the scoring thread: store the window's summary, release it, check it (a
        window set aside is opened again first)."""
        from agenteval.summary.compute import summarize  # the summary, once a window ends

        if not isinstance(w, Window):
            w = self._window(w)
            del self.windows[w.start]
        w.sync()
        w.close(summarize(w.dir).model_dump(mode="json"))
        if far_ahead(w.start, self.config.window_s, time.time()):
            return None  # a broken clock's window: gated when its time comes, if ever
        return self._check(w.dir, w.name)

    def _check(self, run_dir: Path, name: str) -> dict[str, Any] | None:
        if self.config.baseline is None or name in self._journal.checked:
            return None
        result = alerts.check_window(self.config.baseline, run_dir, self._alpha)
        rec = None
        if result is not None and result.blocked:
            rec = alerts.alert_record(name, run_dir, result, self._alpha, self.config.alpha_per_day)
            append_lines(self.config.out / "alerts.jsonl", [json.dumps(rec)])
        self._journal.add_checked(name)
        return rec

    def reopen_unfinished(self) -> None:
        """At start-up: the windows a previous process left unfinished are set aside
        (:attr:`parked`: the tick closes them on time), and finished ones not checked are
        checked."""
        for d in window_dirs(self.config.out, self.config.replica):
            name = d.name if self.config.replica is None else d.parent.name
            try:
                head = read_header(d)
            except InputError:  # not a run: not a window of ours, left alone
                continue
            settings = (head.settings or {}).get("monitor")
            if not isinstance(settings, dict):
                continue
            if settings.get("window_s") not in (None, self.config.window_s):
                raise InputError(
                    f"holds windows of {settings['window_s']} s ({name}); start the monitor"
                    " with the same --window, or give another --out",
                    file=self.config.out,
                )
            start = settings.get("window_start")
            if start in self.windows:  # opened by the replay already
                continue
            if head.finished_at is None and isinstance(start, int):
                self.parked[start] = 0.0  # opened when a trial comes for it, or to close it
            elif head.finished_at is not None and name not in self._journal.checked:
                try:
                    self._check(d, name)
                except (OSError, InputError) as e:
                    self._say(f"agenteval monitor: window {name} not checked: {e}")

    async def close(self) -> None:
        """Stop: release every window (unfinished ones stay unfinished: a restart closes
        them), the log and the lock. Traces in flight stay in the log."""
        await self.wal.close()
        for w in self.windows.values():
            with contextlib.suppress(OSError):
                w.close(None)
        self.windows.clear()
        self._pool.shutdown(wait=True)
        if self._lock is not None:
            self._lock.release()
