"""Windows: each an ordinary run directory under the monitor's ``DIR``.

A trial belongs to the window holding its unit's first start time (the trace's own
clock: replaying a trace puts it in the same window; a unit with no start time goes to the
window of the moment it was scored). Windows are ``window_s`` long and aligned to the
epoch (``--window 1h``: 00:00-01:00 UTC, 01:00-02:00...); the directory is named by the
window's start in UTC: ``2026-12-02T01`` for whole hours, ``2026-12-02T0130`` for whole
minutes, ``2026-12-02T013005`` otherwise.

With ``--replica NAME`` (several monitors behind the OpenTelemetry Collector's trace-id
routing, docs/monitor.md) each writes its own **shard** of a window, ``DIR/<window>/NAME/``,
an ordinary run directory; ``DIR/<window>`` is then a sharded run, which every command that
reads a run reads as one (:func:`~agenteval.rundir.header.shard_dirs`). A ``DIR`` holds
windows of one layout: :func:`check_layout` refuses a replica on windows written without
one, and the other way round.

A window directory is a run written by ``agenteval monitor`` (``run.json`` of kind
``score``, ``cases.jsonl``, ``trials.jsonl``, ``run.lock``): while the monitor writes it,
it holds the run's lock, so ``report`` covers the trials written so far (and says so)
and ``gate``/``rescore`` refuse it; once :meth:`Window.close` has stored its summary and
released the lock, every command reads it like any run. A trace arriving for a window
already closed reopens it (``run --resume`` style: a torn last line is cut).

**Exactly once.** Each trial records its ``trace_id`` and ``span_id`` (metadata, as
``import-traces`` writes them); a window knows the pairs it holds (read back from
``trials.jsonl`` when reopened), and a unit whose pair is there is not written again.
So a trace scored before a crash and replayed from the write-ahead log after it is not
scored twice, even when the crash came between its trial line and the monitor's record
that the trace was done. The pairs and the case ids used are kept as 64-bit hashes, so an
open window costs about 150 bytes of memory per trial (freed when it closes).
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.dataset.ref import DatasetRef
from agenteval.errors import FieldName, InputError
from agenteval.monitor.mapping import Made
from agenteval.rundir import RunHeader, RunWriter, iter_trials
from agenteval.rundir.cases import load_run_cases
from agenteval.rundir.header import CASES, HEADER, TRIALS, shard_dirs
from agenteval.rundir.writer import case_line
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score

__all__ = [
    "Window",
    "check_layout",
    "close_at",
    "far_ahead",
    "window_dirs",
    "window_header",
    "window_name",
    "window_start",
]


def window_start(t: float, window_s: int) -> int:
    """The start (epoch seconds) of the window holding time ``t``."""
    return int(t // window_s) * window_s


def window_name(start: int, window_s: int) -> str:
    """The directory name of the window starting at ``start`` (module docstring)."""
    t = datetime.fromtimestamp(start, UTC)
    if window_s % 3600 == 0:
        return t.strftime("%Y-%m-%dT%H")
    if window_s % 60 == 0:
        return t.strftime("%Y-%m-%dT%H%M")
    return t.strftime("%Y-%m-%dT%H%M%S")


def _h64(text: str) -> int:
    """A 64-bit hash of ``text`` (two keys of a window collide with probability about
    n^2 / 2^65: 6e-8 for 1.5 million trials)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest())


def _cut_torn_line(path: Path) -> None:
    """Cut a last line without its newline (the writer died mid-line)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


class Window:
    """One window's run directory, open for appending (module docstring)."""

    def __init__(
        self, writer: RunWriter, start: int, end: int, keep_cases: bool, name: str
    ) -> None:
        self.writer = writer
        self.start = start
        self.end = end
        self.name = name
        """The window's name (its directory's, or its shard's parent's)."""
        self.dir = writer.run_dir
        self.keys: set[int] = set()
        """64-bit hashes of the ``trace_id:span_id`` of every trial held."""
        self.ids: set[int] = set()
        """64-bit hashes of every case id used."""
        self.repeats: dict[str, int] = {}
        """Next repeat of the case ids used more than once (most are used once)."""
        self.cases: dict[str, Case] = {}
        """First case made under each id, kept only with ``keep_cases`` (ids from an
        attribute repeat; hash ids never do)."""
        self._keep_cases = keep_cases
        self._cases_fh = open(self.dir / CASES, "a", encoding="utf-8")  # noqa: SIM115
        self.written = 0
        self.last_write = 0.0
        """When a trial was last appended (epoch seconds; 0 before the first)."""

    @classmethod
    def open(
        cls,
        out: Path,
        start: int,
        window_s: int,
        header: RunHeader,
        *,
        keep_cases: bool,
        replica: str | None = None,
    ) -> Window:
        """Create the window's run directory (its shard ``replica``), or reopen it (what
        it holds read back)."""
        name = window_name(start, window_s)
        d = _layout_checked(out / name, replica)
        resume = (d / HEADER).exists()
        if resume:
            _cut_torn_line(d / CASES)
            writer, _done, _notes = RunWriter.open_resume(d, command="agenteval monitor")
        else:
            writer = RunWriter.create(d, header, command="agenteval monitor")
        try:  # a failure past here (too many open files...) must not keep the lock
            w = cls(writer, start, start + window_s, keep_cases, name)
        except BaseException:
            writer.close()
            raise
        try:
            if resume:
                w._read_back()
            else:
                (d / CASES).touch()
        except BaseException:
            w.release()
            raise
        return w

    def _read_back(self) -> None:
        for rec in iter_trials(self.dir):
            tid, sid = rec.metadata.get("trace_id"), rec.metadata.get("span_id")
            if isinstance(tid, str) and isinstance(sid, str):
                self.keys.add(_h64(f"{tid}:{sid}"))
            self.ids.add(_h64(rec.case_id))
            if rec.repeat:
                self.repeats[rec.case_id] = max(self.repeats.get(rec.case_id, 1), rec.repeat + 1)
        if self._keep_cases:
            self.cases.update(load_run_cases(self.dir))

    def holds(self, made: Made) -> bool:
        """Whether the unit's trial is already in this window (written before a crash)."""
        return self._key(made) in self.keys

    @staticmethod
    def _key(made: Made) -> int:
        m = made.trial.metadata
        return _h64(f"{m.get('trace_id')}:{m.get('span_id')}")

    def add(
        self, made: Made, scorers: Scorers, extra: dict[str, Score] | None = None
    ) -> dict[str, Score]:
        """Score and append one unit's trial (its case first, when new), with ``extra``
        scores made elsewhere (the judge's); the scores."""
        cid = made.case.id
        h = _h64(cid)
        case = self.cases.get(cid, made.case)
        if h not in self.ids:
            repeat = 0
            self.ids.add(h)
            self._cases_fh.write(case_line(case))
            self._cases_fh.flush()
            if self._keep_cases:
                self.cases[cid] = case
        else:
            repeat = self.repeats.get(cid, 1)
            self.repeats[cid] = repeat + 1
        made.trial.repeat = repeat
        scores = scorers.apply(case, made.trial)
        if extra:
            scores = {**scores, **extra}
        self.writer.append(made.trial, scores)
        self.keys.add(self._key(made))
        self.written += 1
        self.last_write = time.time()
        return scores

    def sync(self) -> None:
        """fsync the window's cases and trials (an fsync of any descriptor of a file
        syncs the file)."""
        self._cases_fh.flush()
        for name in (CASES, TRIALS):
            fd = os.open(self.dir / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def close(self, summary: dict[str, Any] | None) -> None:
        """Store the summary (and the finish time) in ``run.json`` and release the lock."""
        try:
            self.sync()
            if summary is not None:
                self.writer.finish(summary)
        finally:
            self.release()

    def release(self) -> None:
        """Close the window's files and release its lock (idempotent)."""
        try:
            self._cases_fh.close()
        finally:
            self.writer.close()


def far_ahead(start: int, window_s: int, now: float) -> bool:
    """Whether the window beginning at ``start`` begins more than one window length after
    ``now`` (the monitor's clock): traffic stamped there comes from a sender's broken clock,
    not from a window still to come (a sender a few seconds ahead stamps the next one)."""
    return start > now + window_s


def close_at(start: int, window_s: int, last_write: float, delay: float, now: float) -> float:
    """When a window closes: ``delay`` after its end, or after the last trial written to it
    if that is later; a window :func:`far_ahead` closes ``delay`` after its last trial (its
    end may be years away: it must not stay open, holding its files, until then)."""
    if far_ahead(start, window_s, now):
        return last_write + delay
    return max(start + window_s, last_write) + delay


def _layout_checked(window: Path, replica: str | None) -> Path:
    """The run directory of ``replica``'s shard of ``window`` (``window`` itself without a
    replica); InputError when ``window`` is of the other layout."""
    if replica is None:
        if shard_dirs(window):
            raise InputError(
                (
                    "is a window of replicas' shards; start the monitor with ",
                    FieldName("replica"),
                    " NAME",
                ),
                file=window,
            )
        return window
    if (window / HEADER).exists():
        raise InputError(
            (
                "is a window written without ",
                FieldName("replica"),
                "; give another ",
                FieldName("out"),
                " for replicas",
            ),
            file=window,
        )
    return window / replica


def window_dirs(out: Path, replica: str | None) -> list[Path]:
    """The run directories of ``out``'s windows this monitor writes (its shards, with a
    replica), sorted by window."""
    found = []
    for d in sorted(out.iterdir()):
        if d.name.startswith(".") or not d.is_dir():
            continue
        run = d / replica if replica is not None else d
        if (run / HEADER).is_file():
            found.append(run)
    return found


def check_layout(out: Path, replica: str | None) -> None:
    """InputError when a window under ``out`` is of the other layout than ``replica``
    says (module docstring): a monitor never mixes the two."""
    for d in sorted(out.iterdir()) if out.is_dir() else ():
        if not d.name.startswith(".") and d.is_dir():
            _layout_checked(d, replica)


def window_header(settings: dict[str, Any], scorers: Scorers) -> RunHeader:
    """The ``run.json`` a new window starts with."""
    return RunHeader(
        kind="score",
        agent={"type": "monitor"},
        dataset=DatasetRef(path=None),
        scorers=scorers.specs,
        settings={"monitor": settings},
    )
