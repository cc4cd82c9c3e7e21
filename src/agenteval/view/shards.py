"""A window of ``agenteval monitor --replica`` shards, shown as one run.

``monitor --replica NAME`` writes shard NAME of each window, ``DIR/<window>/NAME/``;
``DIR/<window>`` (no ``run.json``, run subdirectories) is then a *sharded run*, which
every reader of a run reads as one (:func:`agenteval.rundir.header.shard_dirs`). A folder
of ordinary runs has run subdirectories too, so the viewer calls a folder sharded only when
:func:`sharded` says so: every shard whose ``run.json`` reads is a monitor window, all of
the same window, and no shard is named as its window is (the one window of a ``DIR``
written without ``--replica`` is ``DIR/<window>/``, not a shard of ``DIR``).

:class:`ShardedIndex` is a :class:`~agenteval.view.index.TrialIndex` over the shards: the
trials of each shard in shard order, a case id met in an earlier shard numbered on after
that shard's repeats, as :func:`agenteval.rundir.iter_trials` numbers them (so trial ``i``
and its repeat are the ones ``agenteval report`` counts). Each shard is indexed on its own
and grows on its own; the rows are put together again when one changes (only appended to
when the last shard with trials grew, the common case while a run is read in steps).
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime
from pathlib import Path

from pydantic_core import from_json

from agenteval._util.regular import open_regular
from agenteval.rundir import HEADER, TRIALS, TrialRecord
from agenteval.rundir.header import shard_dirs
from agenteval.view.index import Row, TrialIndex

HEADER_MAX = 1 << 20
"""A shard's ``run.json`` larger than this is not read to decide what a folder is."""


def _window(run_dir: Path) -> tuple[int, int] | bool:
    """The monitor window (``window_s``, ``window_start``) a run's header names; False for
    a header that names none, True for one that does not read (never opening a FIFO)."""
    try:
        with open_regular(run_dir / HEADER) as f:
            data = from_json(f.read(HEADER_MAX))
    except (OSError, ValueError):
        return True
    settings = data.get("settings") if isinstance(data, dict) else None
    monitor = settings.get("monitor") if isinstance(settings, dict) else None
    if not isinstance(monitor, dict):
        return False
    size, start = monitor.get("window_s"), monitor.get("window_start")
    if type(size) is not int or type(start) is not int:
        return False
    return (size, start)


def _window_named(name: str, start: int) -> bool:
    """True when ``name`` is the name of the window starting at ``start`` (a window of an
    unreplicated ``DIR``: ``2026-12-02T01``, ``...T0130``, ``...T013000``)."""
    try:
        hour = datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H")
    except (OverflowError, OSError, ValueError):
        return False
    return name.startswith(hour)


def sharded(run_dir: Path) -> list[Path]:
    """The shards of ``run_dir`` when it is a window of replicas' shards (module doc),
    sorted by name as :func:`~agenteval.rundir.header.shard_dirs` lists them; else []."""
    d = Path(run_dir)
    if (d / TRIALS).exists():
        return []
    shards = shard_dirs(d)
    first: tuple[int, int] | None = None
    for shard in shards:  # stops at the first that says no: a folder of 1000 runs is cheap
        window = _window(shard)
        if window is True:
            continue  # a header that does not read: the run shows why once it is read
        if window is False or (first is not None and window != first):
            return []
        if _window_named(shard.name, window[1]):
            return []
        first = window
    return shards if first is not None else []


class ShardedIndex(TrialIndex):
    """The trials of every shard of a sharded run, as one index (module doc)."""

    def __init__(self, shards: list[Path]) -> None:
        super().__init__(shards[0])  # never refreshed itself: its parts are
        self.shards = list(shards)
        self.parts = [TrialIndex(s) for s in self.shards]
        self._starts: list[int] = []  # index of each part's first row in self.rows
        self._lists: list[list[Row]] = []  # each part's rows list when last put together
        self._taken: list[int] = []  # how many of each part's rows are in self.rows
        self._before: list[dict[str, int]] = []  # repeats used by the parts before each
        self._used: list[dict[str, int]] = []  # repeats each part uses, by case id

    def refresh(self, max_bytes: int | None = None) -> bool:
        """Refresh every shard (within ``max_bytes`` in all, shard by shard); True when
        trials were added or the index started over."""
        changed = False
        left = max_bytes
        self.pending = False
        for part in self.parts:
            if left is not None and left <= 0:
                self.pending = True
                continue
            before = part.read_bytes
            changed = part.refresh(max_bytes=left) or changed
            self.pending = self.pending or part.pending
            if left is not None:  # a shard cut at the budget: the later ones wait for it
                left = 0 if part.pending else left - (part.read_bytes - before)
        self.error = next((p.error for p in self.parts if p.error is not None), None)
        for part in self.parts:
            self.scorers.update(part.scorers)
            self.causes.update(part.causes)
        if changed or [len(p.rows) for p in self.parts] != self._taken:
            self._put_together()
            return True
        return False

    def _put_together(self) -> None:
        if len(self._lists) == len(self.parts):
            same = [
                p.rows is r and len(p.rows) == n
                for p, r, n in zip(self.parts, self._lists, self._taken, strict=True)
            ]
            if all(same):
                return
            k = same.index(False)
            part = self.parts[k]
            if (
                (part.rows is self._lists[k] or self._taken[k] == 0)
                and len(part.rows) > self._taken[k]
                and all(same[k + 1 :])
                and not any(p.rows for p in self.parts[k + 1 :])
            ):  # only the last shard with trials grew: append
                new = part.rows[self._taken[k] :]
                self.rows.extend(_renumbered(r, self._before[k]) for r in new)
                self._lists[k], self._taken[k] = part.rows, len(part.rows)
                grew = self._used[k]
                for r in new:
                    grew[r.case_id] = max(grew.get(r.case_id, 0), r.repeat + 1)
                after = _plus(self._before[k], grew)  # the later shards: empty, numbered on
                for j in range(k + 1, len(self.parts)):
                    self._starts[j], self._before[j] = len(self.rows), after
                return
        rows: list[Row] = []
        offset: dict[str, int] = {}
        self._starts, self._lists, self._taken, self._before, self._used = [], [], [], [], []
        for part in self.parts:
            self._starts.append(len(rows))
            self._lists.append(part.rows)
            self._taken.append(len(part.rows))
            self._before.append(offset)
            used: dict[str, int] = {}
            for r in part.rows:
                used[r.case_id] = max(used.get(r.case_id, 0), r.repeat + 1)
                rows.append(_renumbered(r, offset))
            self._used.append(used)
            offset = _plus(offset, used)
        self.rows = rows

    def record(self, i: int) -> tuple[TrialRecord, bytes]:
        """The full trial ``i`` (0-based, in shard order) and its raw line (as its shard
        stores it: the repeat there is the shard's own)."""
        row = self.rows[i]  # IndexError when there is no such trial
        k = bisect_right(self._starts, i) - 1
        rec, raw = self.parts[k].record(i - self._starts[k])
        rec.repeat = row.repeat
        return rec, raw


def _plus(offset: dict[str, int], used: dict[str, int]) -> dict[str, int]:
    """The repeats used by the shards so far, and then by one more (a new dict)."""
    out = dict(offset)
    for cid, n in used.items():
        out[cid] = out.get(cid, 0) + n
    return out


def _renumbered(row: Row, offset: dict[str, int]) -> Row:
    n = offset.get(row.case_id, 0)
    if not n:
        return row
    r = row  # a new Row built field by field: 6x faster than dataclasses.replace
    return Row(
        r.offset, r.case_id, r.repeat + n, r.answered, r.cause, r.message,
        r.failed, r.errors, r.latency_s, r.preview,
    )  # fmt: skip
