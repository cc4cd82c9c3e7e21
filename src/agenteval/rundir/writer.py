"""Writing a run directory: claim a new one, append trials under its lock, resume one.

:func:`claim_new_run_dir` makes a directory a new run's (created, or empty before) and takes
its :class:`~agenteval.rundir.lock.RunLock`. :class:`RunWriter` appends one flushed trial line
at a time; :meth:`RunWriter.open_resume` reopens a run, cutting a torn last line and
dropping cancelled trials; :meth:`RunWriter.discard` removes a fresh run that wrote no
trial. :func:`write_cases` writes the cases snapshot.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from agenteval._util.untrusted import replace_surrogates
from agenteval.cases.case import Case
from agenteval.errors import FieldName, InputError, cannot_write
from agenteval.rundir.header import (
    CASES,
    HEADER,
    TRIALS,
    RunHeader,
    read_header,
    shard_dirs,
    write_header,
)
from agenteval.rundir.lock import LOCK, RunLock
from agenteval.rundir.trials import _ScoreKey, _trial_line, parse_trial_line
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

_BUFFER = 1 << 20  # bytes a buffered writer gathers before it writes


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_lines_before(path: Path, end: int) -> list[bytes]:
    with open(path, "rb") as f:
        return f.read(end).splitlines(keepends=True)


class RunWriter:
    """Appends trials to a run directory, one flushed line each, holding the run's lock.

    Made by :meth:`create` (a new run) or :meth:`open_resume` (continue one). Either holds
    the exclusive :class:`~agenteval.rundir.lock.RunLock` of the directory until :meth:`close`.
    """

    def __init__(
        self,
        run_dir: Path,
        header: RunHeader,
        fh: IO[str],
        *,
        lock: RunLock | None = None,
        fresh: bool = False,
        created_dir: bool = False,
    ) -> None:
        self.run_dir = run_dir
        self.header = header
        self._fh = fh
        self._lock = lock
        self.fresh = fresh
        """True for a run this writer created (False after :meth:`open_resume`)."""
        self.created_dir = created_dir
        """True when this writer also created the directory (it did not exist before)."""
        self.written = 0
        self._frags: dict[_ScoreKey, str] = {}
        self.observer: Callable[[Trial, dict[str, Score]], None] | None = None
        """Called after each append (e.g. a live summary), never for resumed trials."""
        self.buffered = False
        """True: lines are not flushed one by one (see :meth:`create`); :meth:`flush`."""

    @classmethod
    def create(
        cls,
        run_dir: str | Path,
        header: RunHeader,
        *,
        overwrite: bool = False,
        command: str = "agenteval",
        buffered: bool = False,
    ) -> RunWriter:
        """Start a new run directory (see :func:`claim_new_run_dir` for what is refused).

        ``buffered``: lines reach the file in large writes, not flushed one by one (for a
        run that is removed whole when it fails, as rescore's is; a reader meanwhile may
        see a torn last line, which readers skip). Measured on the rescore bench
        (bench/run.py): 9 µs a trial less."""
        d = Path(run_dir)
        created, lock = claim_new_run_dir(d, command, overwrite=overwrite)
        try:
            write_header(d, header)
            size = _BUFFER if buffered else -1
            fh = open(d / TRIALS, "w", encoding="utf-8", buffering=size)  # noqa: SIM115 - closed in close()
        except BaseException:
            _remove_new_run(d, created)
            lock.release()
            raise
        w = cls(d, header, fh, lock=lock, fresh=True, created_dir=created)
        w.buffered = buffered
        return w

    @classmethod
    def open_resume(
        cls,
        run_dir: str | Path,
        *,
        command: str = "agenteval run --resume",
        check: Callable[[RunHeader], None] | None = None,
    ) -> tuple[RunWriter, set[tuple[str, int]], list[str]]:
        """Reopen a run to continue it, under its lock.

        ``check(header)`` raises to refuse the resume (a different fingerprint, say); it
        runs before the lock file is touched, and again once the lock is held, before
        anything is changed. Returns the writer, the
        (case_id, repeat) keys already recorded, and notes on what was repaired: a torn last
        line (the process died mid-write) is cut off, and trials that were cancelled by an
        interrupt are dropped so that they run again.
        """
        d = Path(run_dir)
        header = read_header(d)  # not a run, or not this run: refused before any write
        if check is not None:
            check(header)
        lock = RunLock.acquire(d, command)
        try:
            header = read_header(d)
            if check is not None:
                check(header)
            done, notes = _repair_trials(d / TRIALS)
            fh = open(d / TRIALS, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except BaseException:
            lock.release()
            raise
        w = cls(d, header, fh, lock=lock)
        w.written = len(done)
        return w, done, notes

    def append(self, trial: Trial, scores: dict[str, Score], *, repair: bool = True) -> None:
        """Write one trial line and flush it to the OS; then tell the observer, if any.

        ``repair=False``: a trial that cannot be encoded raises ValueError (nothing is
        written) instead of being written with U+FFFD for its lone surrogates."""
        line = _trial_line(trial, scores, self._frags, repair)
        try:
            self._fh.write(line)
        except UnicodeEncodeError:  # a lone surrogate (encoding fails before any write)
            self._fh.write(replace_surrogates(line))
        if not self.buffered:
            self._fh.flush()
        self.written += 1
        if self.observer is not None:
            self.observer(trial, scores)

    def append_line(self, line: str) -> None:
        """Write one finished trial line (``rundir.trials.trial_line``, made by a worker) and
        flush it to the OS. The observer is not told (the caller summarises from the file)."""
        try:
            self._fh.write(line)
        except UnicodeEncodeError:  # a lone surrogate (encoding fails before any write)
            self._fh.write(replace_surrogates(line))
        if not self.buffered:
            self._fh.flush()
        self.written += 1

    def append_lines(self, lines: list[str]) -> None:
        """:meth:`append_line` for several lines: the same bytes, written and flushed at
        once: one system call instead of one a line (append_line took ~16 us a line of the
        rescore driver's wall time, under the workers' load; measured with the fold)."""
        if not lines:
            return
        try:
            self._fh.write("".join(lines))
        except UnicodeEncodeError:  # nothing was written: line by line, each repaired
            for line in lines:
                self.append_line(line)
            return
        if not self.buffered:
            self._fh.flush()
        self.written += len(lines)

    def flush(self) -> None:
        """Hand every line appended so far to the OS (before reading the run back)."""
        self._fh.flush()

    def finish(self, summary: dict[str, Any] | None) -> None:
        """Record the summary and the finish time in ``run.json``."""
        self.header.summary = summary
        self.header.finished_at = datetime.now(UTC)
        write_header(self.run_dir, self.header)

    def discard(self) -> bool:
        """Undo a fresh run in which no trial was written: remove the directory if this
        writer created it, else only the files it wrote. Then close. Returns whether
        anything was removed (never, for a resumed run or once a trial was written)."""
        removable = self.fresh and self.written == 0
        self._fh.close()
        if removable:
            _remove_new_run(self.run_dir, self.created_dir)
        self.close()
        return removable

    def close(self) -> None:
        """Close the trial file and release the lock (idempotent; the lock is released
        even when closing fails, e.g. a full disk refusing the last buffered bytes)."""
        try:
            self._fh.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _repair_trials(path: Path) -> tuple[set[tuple[str, int]], list[str]]:
    """The keys recorded in ``path``; cut a torn last line, drop cancelled trials."""
    done: set[tuple[str, int]] = set()
    notes: list[str] = []
    if not path.exists():
        return done, notes
    keep: list[bytes] | None = None  # only built when a cancelled trial must go
    cancelled = 0
    good_end = 0
    with open(path, "rb") as f:
        lines = 0
        for raw in f:
            lines += 1
            if not raw.endswith(b"\n"):
                notes.append(f"{path}:{lines}: dropped a torn last line ({len(raw)} bytes)")
                break
            good_end += len(raw)
            if not raw.strip():
                continue
            rec = parse_trial_line(raw, file=str(path), lineno=lines)
            if rec.failure is not None and rec.failure.cause == "cancelled":
                if keep is None:
                    keep = _read_lines_before(path, good_end - len(raw))
                cancelled += 1
                continue
            if keep is not None:
                keep.append(raw)
            done.add(rec.key)
    if keep is not None:
        notes.append(f"{cancelled} cancelled trial(s) will run again")
        _atomic_write_bytes(path, b"".join(keep))
    else:
        with open(path, "r+b") as f:
            f.truncate(good_end)
    return done, notes


RUN_FILES = (HEADER, HEADER + ".tmp", TRIALS, CASES, LOCK)
"""The files a run directory holds (the lock file and an interrupted header write too)."""
_SCRATCH = {LOCK, HEADER + ".tmp"}
"""Files left by a writer that died before its first real write: not a run yet."""


def claim_new_run_dir(d: Path, command: str, *, overwrite: bool = False) -> tuple[bool, RunLock]:
    """Make ``d`` a new run's directory and take its lock; ``(created, lock)``.

    ``d`` is created when it does not exist (``mkdir`` is exclusive: of two processes
    creating it at once, one creates it and the other finds it), else it must be an empty
    directory (or hold only a lock file left by a writer that died at once). A directory
    holding a run (``run.json``) is refused unless ``overwrite``; any other non-empty
    directory is refused, and nothing is written into it. The check is repeated under the
    lock, so of two processes starting a run in one new directory exactly one proceeds and
    the other gets one InputError line.
    """
    created = False
    if not d.exists() and not d.is_symlink():
        try:
            d.parent.mkdir(parents=True, exist_ok=True)
            d.mkdir()
            created = True
        except FileExistsError:
            pass  # made by someone else meanwhile: checked like any existing directory
        except OSError as e:  # read-only or full: exit 5; a file in the way: exit 2
            raise cannot_write(e, d, "the run directory") from None
    if not d.is_dir():
        raise InputError("exists and is not a directory", file=d)
    if not created:
        _check_reusable(d, overwrite, command)
    lock = RunLock.acquire(d, command)
    try:
        _check_reusable(d, overwrite, command)
    except BaseException:
        lock.release()
        raise
    return created, lock


def _check_reusable(d: Path, overwrite: bool, command: str = "agenteval run") -> None:
    try:
        names = set(os.listdir(d)) - _SCRATCH
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror or e})", file=d) from None
    if not names:
        return
    if HEADER in names:
        if overwrite:
            return
        if command.startswith("agenteval run"):
            how: tuple[str, ...] = (
                "use ",
                FieldName("resume"),
                " to continue it or choose another ",
                FieldName("out"),
            )
        elif command.startswith("evaluate()"):
            how = ("pass resume=True to continue it or choose another out",)
        else:
            how = ("choose another ", FieldName("out"), " (a run is never overwritten)")
        raise InputError(("already holds a run; ", *how), file=d)
    shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
    raise InputError(
        f"is not empty and holds no agenteval run ({shown}); choose a new or empty directory",
        file=d,
    )


def _remove_new_run(d: Path, created: bool) -> None:
    """Remove a new run: the whole directory if we made it, else only our files."""
    if created:
        shutil.rmtree(d, ignore_errors=True)
        return
    for name in RUN_FILES:
        with contextlib.suppress(OSError):
            (d / name).unlink()


def write_cases(run_dir: Path, cases: Iterator[Case] | list[Case]) -> None:
    """Write the cases snapshot."""
    with open(run_dir / CASES, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(case_line(c))


def case_line(c: Case) -> str:
    """One line of the cases snapshot (for writers that write it a case at a time)."""
    return c.model_dump_json(exclude_defaults=True) + "\n"


def cases_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / CASES


def cases_paths(run_dir: str | Path) -> list[Path]:
    """The cases snapshots of a run: its own, or each shard's for a sharded run."""
    shards = shard_dirs(run_dir)
    return [s / CASES for s in shards] if shards else [cases_path(run_dir)]
