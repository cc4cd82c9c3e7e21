"""One writer per run: an exclusive OS lock on ``RUN_DIR/run.lock``.

``run``, ``run --resume``, ``score``, ``rescore`` and ``judge`` hold this lock on the run
directory they write, from before their first write until they exit. It is an
``fcntl.flock`` lock on the run directory itself, so the operating system releases it when
the process ends, however it ends (a SIGKILL included): a stale lock file never blocks
anyone, and deleting ``run.lock`` while a writer holds the lock does not let a second
writer in. The file stays in the run directory and holds, for the message a second writer
sees, the pid, the command and the start time of the process that last took the lock.

Readers (``report``, ``gate``) do not take it: ``run.json`` is replaced atomically and a
torn last trial line is skipped, so a reader never sees a half-written trial. They do
check it (:meth:`RunLock.holder`): ``gate`` refuses a run still being written (exit 2),
``report`` says on stderr that it covers only the trials written so far.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from agenteval.errors import InputError, cannot_write
from agenteval.rundir.header import shard_dirs

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; runs are then not locked
    fcntl = None  # type: ignore[assignment]

LOCK = "run.lock"


def _holder(path: Path) -> str:
    """Who holds the lock, as its file says (best effort: it may be mid-write)."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {info['pid']}, '{info['command']}', started {info['started_at']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that is starting"


class RunLock:
    """The held lock on one run directory. :meth:`release` (or process exit) frees it."""

    def __init__(self, run_dir: Path, fd: int) -> None:
        self.run_dir = run_dir
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, run_dir: str | Path, command: str) -> RunLock:
        """Take the lock of ``run_dir`` (which must exist) without waiting.

        InputError (exit 2) naming the holder when another process has it:
        ``runs/x: another agenteval process is writing this run (pid 123, 'agenteval run',
        started 2026-01-01T10:00:00+00:00); wait for it to end``.
        """
        d = Path(run_dir)
        path = d / LOCK
        try:
            # the lock is on the directory: a file can be deleted and made again under a
            # holder's feet (then two processes would each lock "run.lock"), the run
            # directory cannot while it holds the run
            dir_fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError as e:
            raise InputError(f"cannot open the run directory ({e.strerror or e})", file=d) from None
        if fcntl is not None:
            try:
                fcntl.flock(dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(dir_fd)
                raise InputError(
                    f"another agenteval process is writing this run ({_holder(path)});"
                    " wait for it to end",
                    file=d,
                ) from None
        info = {
            "pid": os.getpid(),
            "command": command,
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
            finally:
                os.close(fd)
        except OSError as e:  # read-only or full: exit 5; a file in the way: exit 2
            os.close(dir_fd)
            raise cannot_write(e, path, "the lock file") from None
        return cls(d, dir_fd)

    @staticmethod
    def holder(run_dir: str | Path) -> str | None:
        """Who is writing ``run_dir`` now (as :meth:`acquire`'s message words it), or None
        when no process holds its lock. Writes nothing: for commands that only read a run
        (``rescore``/``judge`` of their source). For a sharded run: the first shard held,
        named (``shard b: pid 123, ...``)."""
        d = Path(run_dir)
        for shard in shard_dirs(d):
            held = RunLock.holder(shard)
            if held is not None:
                return f"shard {shard.name}: {held}"
        if fcntl is None:  # pragma: no cover - Windows
            return None
        try:
            fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return None  # not a directory: the reader reports it
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _holder(d / LOCK)
        finally:
            os.close(fd)  # closing drops a shared lock taken above
        return None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Free the lock (idempotent). The lock file stays."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor of the directory releases the flock


def refuse_if_being_written(run_dir: str | Path, command: str) -> None:
    """InputError (exit 2) when another process holds the lock of ``run_dir``: ``rescore``
    and ``judge`` would copy a run with trials still missing, and the copy would look
    complete. ``runs/x: is still being written (pid 123, 'agenteval run', started ...);
    wait for it to end, then run agenteval rescore again``."""
    holder = RunLock.holder(run_dir)
    if holder is not None:
        raise InputError(
            f"is still being written ({holder}); wait for it to end, then run {command} again",
            file=run_dir,
        )
