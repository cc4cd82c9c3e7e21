"""The runs under one folder: found by walking it, read lazily, re-read when they change.

:func:`find_run_dirs` lists every run directory under a root (a folder holding ``run.json``
or ``trials.jsonl``, or a window of ``monitor --replica`` shards, read as one run:
:mod:`agenteval.view.shards`; the walk does not enter run directories, hidden folders or
symlinked folders). :class:`Catalog` maps each one to a *key*, its path relative to the root
(``.`` for the root itself), and keeps a :class:`RunState` per key. A key from a URL is
only ever looked up in that map: a path given by a client is never joined to the root.

Everything here reads; nothing writes. A run that cannot be read is *broken*:
:attr:`RunState.error` holds the one-line reason (a bad ``run.json``, a bad trial line,
a bad ``cases.jsonl``) and the other runs are unaffected.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from pydantic_core import from_json

from agenteval._util.regular import not_regular, open_regular
from agenteval.cases.case import Case, case_from_run
from agenteval.errors import InputError
from agenteval.rundir import CASES, HEADER, TRIALS, RunHeader, read_header
from agenteval.rundir.header import shard_dirs
from agenteval.rundir.lock import RunLock
from agenteval.summary.compute import summarize
from agenteval.summary.model import Summary
from agenteval.summary.sources import case_tags
from agenteval.view.index import TrialIndex
from agenteval.view.shards import ShardedIndex, sharded

RESCAN_S = 2.0
"""The folder is walked again at most this often (seconds)."""
STEP = 1 << 20
"""Bytes of a trial file read per step (a page answers after one step; the rest is read in
the background)."""


def find_run_dirs(root: str | Path) -> list[Path]:
    """Every run directory under ``root`` (``root`` itself included), sorted by path."""
    root = Path(root)
    inside = root.resolve()
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if HEADER in filenames or TRIALS in filenames:
            if not _escapes(Path(dirpath), inside):
                found.append(Path(dirpath))
            dirnames[:] = []
            continue
        shards = sharded(Path(dirpath))
        if shards:  # one run: its shards are not listed on their own
            if not any(_escapes(s, inside) for s in shards):
                found.append(Path(dirpath))
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    return sorted(found)


def _escapes(run_dir: Path, root: Path) -> bool:
    """True when a file of the run is a symbolic link to somewhere outside ``root`` (or
    the run itself is, a shard linked into its window): the viewer serves only what lies
    under the folder it was given."""
    if run_dir.is_symlink() and not run_dir.resolve().is_relative_to(root):
        return True
    for name in (HEADER, TRIALS, CASES):
        p = run_dir / name
        if p.is_symlink() and not p.resolve().is_relative_to(root):
            return True
    return False


def _shards_now(run_dir: Path) -> list[Path]:
    """The shards of a run found sharded before, listed without reading them ([] for a
    run with its own files, as :func:`~agenteval.view.shards.sharded` says)."""
    if (run_dir / HEADER).exists() or (run_dir / TRIALS).exists():
        return []
    return shard_dirs(run_dir)


def _sig(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class RunState:
    """One run directory as the viewer knows it; :meth:`refresh` brings it up to date."""

    def __init__(self, key: str, path: Path) -> None:
        self.key = key
        self.path = path
        self.shards = sharded(path)
        """The shards of a sharded run (:mod:`agenteval.view.shards`), else []."""
        self.header: RunHeader | None = None
        self.header_error: str | None = None
        self.cases_error: str | None = None
        self.tags: dict[str, tuple[str, ...]] = {}
        self.index = ShardedIndex(self.shards) if self.shards else TrialIndex(path)
        self.lock = threading.Lock()
        self._header_sig: object = False
        self._cases_sig: object = False
        self._summary: tuple[object, Summary | None, str | None] | None = None
        self._catching = False

    @property
    def error(self) -> str | None:
        """Why the run is broken (one line), or None."""
        return self.header_error or self.cases_error or self.index.error

    @property
    def all_tags(self) -> list[str]:
        """Every tag of the run's cases, sorted."""
        return sorted({t for ts in self.tags.values() for t in ts})

    @property
    def loading(self) -> bool:
        """True while the run is still being read in the background (see :meth:`refresh`)."""
        return self.index.pending or self._cases_sig != self._sig_of(CASES)

    def _files(self, name: str) -> list[Path]:
        """The run's file ``name``: its own, or each shard's."""
        return [s / name for s in self.shards] if self.shards else [self.path / name]

    def _sig_of(self, name: str) -> object:
        return tuple(_sig(p) for p in self._files(name))

    def _not_regular(self, name: str) -> str | None:
        return next((p for p in map(not_regular, self._files(name)) if p is not None), None)

    def refresh(self, budget: int | None = None) -> bool:
        """Re-read what changed on disk; True when trials were added (or re-read).

        ``budget`` (bytes): read at most about that much of the trial file and leave the
        cases snapshot's tags for later (:meth:`catch_up` reads the rest), so that a page
        over a very large run answers at once with what is read so far. None: read all.
        """
        with self.lock:
            sig = self._sig_of(HEADER)
            if sig != self._header_sig:
                self._header_sig = sig
                problem = self._not_regular(HEADER)
                try:
                    if problem is not None:  # a FIFO would block the read: broken
                        self.header, self.header_error = None, problem
                    else:
                        self.header, self.header_error = read_header(self.path), None
                except InputError as e:
                    self.header, self.header_error = None, str(e)
            added = self.index.refresh(max_bytes=budget)
        if budget is None:
            self._read_tags()
        return added

    def _read_tags(self) -> None:
        sig = self._sig_of(CASES)
        if sig == self._cases_sig:
            return
        problem = self._not_regular(CASES)  # a FIFO would block the read: broken
        try:  # read outside the lock: pages keep answering meanwhile
            tags, error = ({}, problem) if problem else (case_tags(self.path) or {}, None)
        except (InputError, OSError, UnicodeDecodeError) as e:
            where = self.path / CASES if not self.shards else self.path
            tags, error = {}, f"{where}: {e}"
        with self.lock:
            self.tags, self.cases_error, self._cases_sig = tags, error, sig

    def catch_up(self, step: int = STEP) -> None:
        """Read everything :meth:`refresh` with a budget left, ``step`` bytes at a time
        (the lock is released between steps)."""
        while True:
            with self.lock:
                self.index.refresh(max_bytes=step)
                if not self.index.pending:
                    break
            time.sleep(0.002)  # let the pages in between
        self._read_tags()

    @property
    def catching_up(self) -> bool:
        """True while :meth:`start_catch_up`'s thread is reading."""
        return self._catching

    def start_catch_up(self) -> None:
        """:meth:`catch_up` in a background thread, unless one is running or nothing is
        left to read."""
        with self.lock:
            if self._catching or not self.loading:
                return
            self._catching = True

        def work() -> None:
            try:
                self.catch_up()
            finally:
                self._catching = False

        threading.Thread(target=work, name=f"index {self.key}", daemon=True).start()

    def case(self, case_id: str) -> Case | None:
        """The case ``case_id`` from the run's cases snapshot, or None (no snapshot, no
        such case, or a line that does not validate; a sharded run: the last shard's
        snapshot that has it, as ``agenteval report`` reads them)."""
        found: Case | None = None
        for path in self._files(CASES):
            try:
                with open_regular(path) as f:
                    for line in f:
                        try:
                            d = from_json(line)
                        except ValueError:
                            continue
                        if isinstance(d, dict) and d.get("id") == case_id:
                            try:  # never imports code the run names
                                found = case_from_run(d)
                            except ValueError:
                                found = None
                            break
            except OSError:
                continue
        return found

    def writing(self) -> str | None:
        """Who is writing the run now (pid, command, start), or None."""
        return RunLock.holder(self.path)

    def summary(self) -> tuple[Summary | None, str | None]:
        """The run's Summary (the one ``agenteval report`` prints), or (None, reason).

        A finished run's stored summary is used when it covers every trial in the file
        (while the file is still being read, when it is finished); otherwise the summary is
        computed once the whole file is read, once per state of the files, outside the lock.
        Until then: (None, None).
        """
        with self.lock:
            key = (self._header_sig, self._cases_sig, len(self.index.rows))
            if self._summary is not None and self._summary[0] == key:
                return self._summary[1], self._summary[2]
            reason, h, loading = self.error, self.header, self.loading
            n = len(self.index.rows)
        summary: Summary | None = None
        if reason is None and h is not None:
            stored = h.summary
            if h.finished_at and stored and (stored.get("trials") == n or loading):
                try:
                    summary = Summary.model_validate(stored)
                except ValueError:
                    summary = None
            if summary is None and loading:
                return None, None
            if summary is None:
                try:
                    summary = summarize(self.path)
                except InputError as e:
                    reason = str(e)
        with self.lock:
            self._summary = (key, summary, reason)
        return summary, reason


class Catalog:
    """The runs under ``root`` by key (see the module doc)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.runs: dict[str, RunState] = {}
        self._scanned = 0.0
        self._lock = threading.Lock()

    def scan(self, *, force: bool = False) -> dict[str, RunState]:
        """Walk the root again (at most every :data:`RESCAN_S` unless ``force``)."""
        with self._lock:
            now = time.monotonic()
            if force or not self.runs or now - self._scanned >= RESCAN_S:
                self._scanned = now
                fresh: dict[str, RunState] = {}
                for d in find_run_dirs(self.root):
                    key = d.relative_to(self.root).as_posix()
                    old = self.runs.get(key)
                    if old is not None and old.shards != _shards_now(d):  # a replica came/went
                        old = None
                    fresh[key] = old if old is not None else RunState(key, d)
                self.runs = fresh
            return self.runs

    def get(self, key: str) -> RunState | None:
        """The run with this key (rescanning once when it is not known yet), or None."""
        run = self.scan().get(key)
        if run is None:
            run = self.scan(force=True).get(key)
        return run
