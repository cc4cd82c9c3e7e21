"""A temporary on-disk store of spans, units and cases, so that ``import-traces`` needs
memory for one trace (or one conversation) at a time, not for the whole input.

:class:`Spool` is a SQLite database (the standard library's ``sqlite3``) in ``TMPDIR``
whose file is unlinked (and its temporary directory removed) as soon as SQLite has opened
it: the data lives in the open file only, so nothing is left behind however the process
ends, SIGKILL included (SQLite's own temporary files are unlinked on open too). SQLite
needs a path to open the file, so for the instant between creating and unlinking it the
file has a name, ``agenteval-import-*/spool.db``; :meth:`Spool.close` closes it:

1. :meth:`Spool.add` stores every span read, in read order (``seq``), keyed by trace id;
   spans without a trace or span id are only counted, as :func:`~agenteval.traces.units.
   group_units` does.
2. :meth:`Spool.build` takes the traces in the order they were first seen, loads each
   one's spans (in read order) and makes its units with the code of
   :mod:`agenteval.traces.units` (so cycles, second copies of a span id and agent spans
   are found and counted the same way, one trace in memory), and stores each unit with
   its sort key.
3. :meth:`Spool.units` gives the units in the order of :func:`~agenteval.traces.units.
   group_units`: start time (units without one last), then key; with ``--group
   conversation`` the invocation units of one conversation are merged into one, placed by
   the conversation's first start.

:meth:`Spool.use_case` keeps the cases made so far (the first case under an id, and how
many trials used it) for repeats numbering without a dict of every case in memory.

Sort keys are bytes that compare as the tuples ``(start is None, start, key)`` do (SQLite
compares BLOBs with ``memcmp``): the start as a sign- and length-prefixed big-endian
integer, then the key in UTF-8 (code point order; lone surrogates kept with
``surrogatepass``).
"""

from __future__ import annotations

import marshal
import pickle
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.traces.records import SpanEvent, SpanRecord
from agenteval.traces.units import Unit, Units, _conversation, _trace_units

__all__ = ["Spool"]

_BATCH = 2000
_PENDING = 1000
_BATCH_BYTES = 8 << 20
_INSERT_UNITS = "INSERT INTO units (sortkey, startkey, conv, data) VALUES (?, ?, ?, ?)"
_NO_START = b"\x02"


def _text(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def start_key(ns: int | None) -> bytes:
    """Bytes that sort as ``(ns is None, ns)``: negatives, then non-negatives, then None."""
    if ns is None:
        return _NO_START
    mag = min(abs(ns), (1 << 2040) - 1)  # 255 bytes at most (a start no clock writes)
    b = mag.to_bytes(max(1, (mag.bit_length() + 7) // 8), "big")
    if ns >= 0:
        return b"\x01" + bytes([len(b)]) + b
    return b"\x00" + bytes([255 - len(b)]) + bytes(255 - x for x in b)


def _dump(obj: Any) -> bytes:
    """``obj`` as bytes: ``marshal`` (plain values, several times faster than pickling
    dataclasses), ``pickle`` for what marshal cannot write; the first byte says which."""
    try:
        return b"m" + marshal.dumps(obj)
    except ValueError:
        return b"p" + pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _load(data: bytes) -> Any:
    if data[:1] == b"m":
        return marshal.loads(memoryview(data)[1:])
    return pickle.loads(memoryview(data)[1:])


def _plain(m: Any) -> Any:
    return m if type(m) is dict else dict(m)


def _span_row(s: SpanRecord) -> tuple[Any, ...]:
    events = tuple((e.name, _plain(e.attributes), e.time_ns) for e in s.events)
    return (
        s.name,
        s.span_id,
        s.trace_id,
        s.parent_id,
        s.start_ns,
        s.end_ns,
        _plain(s.attributes),
        events,
        s.status,
        s.status_message,
        _plain(s.resource),
    )


def _span(row: Any) -> SpanRecord:
    name, span_id, trace_id, parent, start, end, attrs, events, status, message, res = row
    return SpanRecord(
        name,
        span_id,
        trace_id,
        parent,
        start,
        end,
        attrs,
        tuple(SpanEvent(*e) for e in events),
        status,
        message,
        res,
    )


def _unit_row(u: Unit) -> tuple[Any, ...]:
    at = {id(s): i for i, s in enumerate(u.spans)}
    roots = [at[id(r)] for r in u.roots]  # a root is one of the unit's spans
    return (u.key, u.trace_id, u.conversation, [_span_row(s) for s in u.spans], roots)


def _unit(row: Any) -> Unit:
    key, trace_id, conversation, rows, roots = row
    spans = [_span(r) for r in rows]
    return Unit(key, trace_id, [spans[i] for i in roots], spans, conversation)


class _Bloom:
    """A set of byte strings that may answer yes wrongly, never no wrongly, in a fixed
    2 MiB whatever the number of members (two bits a member out of 2**24: about one
    false yes in 1,800 at 200,000 members, one in 80 at a million), so memory stays flat
    in the input's size."""

    _BITS = 1 << 24

    def __init__(self) -> None:
        self._bits = bytearray(self._BITS // 8)

    def _at(self, key: bytes) -> tuple[int, int]:
        h = hash(key)
        return h & (self._BITS - 1), (h >> 24) & (self._BITS - 1)

    def add(self, key: bytes) -> None:
        for i in self._at(key):
            self._bits[i >> 3] |= 1 << (i & 7)

    def has(self, key: bytes) -> bool:
        return all(self._bits[i >> 3] & (1 << (i & 7)) for i in self._at(key))


class Spool:
    """Spans → units (module docstring). ``group`` is ``invocation`` or ``conversation``."""

    def __init__(self, group: str = "invocation") -> None:
        self.group = group
        self.found = Units()
        """Spans read and skipped (its ``units`` list stays empty: the units are on disk)."""
        self.units_count = 0
        """Units made (conversations merged) once :meth:`build` ran."""
        tmp = Path(tempfile.mkdtemp(prefix="agenteval-import-"))
        try:
            self._db = sqlite3.connect(tmp / "spool.db", isolation_level=None)
        finally:  # the open file keeps the data; no name is left for a killed process
            (tmp / "spool.db").unlink(missing_ok=True)
            tmp.rmdir()
        self._setup()  # no journal (journal_mode=OFF): SQLite never needs the name again
        self._pending: dict[bytes, list[Any]] = {}
        """Cases not yet stored: id → [trials so far, case]."""
        self._seen = _Bloom()
        """The ids stored in the database (maybe: a Bloom filter)."""

    def _setup(self) -> None:
        for pragma in (
            "journal_mode=OFF",
            "synchronous=OFF",
            "temp_store=FILE",
            "cache_size=-16384",  # 16 MiB of pages, whatever the input's size
        ):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.executescript(
            """
            CREATE TABLE spans (seq INTEGER PRIMARY KEY, trace TEXT NOT NULL, data BLOB);
            CREATE TABLE units (id INTEGER PRIMARY KEY, sortkey BLOB, startkey BLOB,
                                conv BLOB, data BLOB);
            CREATE TABLE groups (sortkey BLOB, unit INTEGER, conv BLOB);
            CREATE TABLE cases (id BLOB PRIMARY KEY, n INTEGER, data BLOB) WITHOUT ROWID;
            """
        )

    def add(self, spans: Iterable[SpanRecord]) -> None:
        """Store ``spans`` (in the order given, after those stored before)."""
        rows: list[tuple[str, bytes]] = []
        size = 0
        self._db.execute("BEGIN")
        try:
            for s in spans:
                self.found.spans += 1
                if not s.trace_id or not s.span_id:
                    self.found.skip("no trace or span id")
                    continue
                data = _dump(_span_row(s))
                rows.append((s.trace_id, data))
                size += len(data)
                if len(rows) >= _BATCH or size >= _BATCH_BYTES:
                    self._db.executemany("INSERT INTO spans (trace, data) VALUES (?, ?)", rows)
                    rows.clear()
                    size = 0
            self._db.executemany("INSERT INTO spans (trace, data) VALUES (?, ?)", rows)
        finally:
            self._db.execute("COMMIT")

    def build(self) -> None:
        """Make and store every trace's units (traces in first-seen order)."""
        db = self._db
        db.execute("CREATE INDEX spans_trace ON spans (trace, seq)")
        db.execute("BEGIN")
        rows: list[tuple[bytes, bytes, bytes | None, bytes]] = []
        size = 0
        traces = db.execute("SELECT trace FROM spans GROUP BY trace ORDER BY MIN(seq)")
        for (trace_id,) in traces:
            spans = [
                _span(_load(d))
                for (d,) in db.execute(
                    "SELECT data FROM spans WHERE trace = ? ORDER BY seq", (trace_id,)
                )
            ]
            for u in _trace_units(trace_id, spans, self.found):
                u.conversation = _conversation(u)
                start = start_key(u.start_ns)
                conv = None if u.conversation is None else _text(u.conversation)
                data = _dump(_unit_row(u))
                rows.append((start + _text(u.key), start, conv, data))
                size += len(data)
            if len(rows) >= _BATCH or size >= _BATCH_BYTES:
                db.executemany(_INSERT_UNITS, rows)
                rows.clear()
                size = 0
        db.executemany(_INSERT_UNITS, rows)
        if self.group == "conversation":
            db.execute("INSERT INTO groups SELECT sortkey, id, NULL FROM units WHERE conv IS NULL")
            convs = db.execute(
                "SELECT MIN(startkey), conv FROM units WHERE conv IS NOT NULL GROUP BY conv"
            )
            db.executemany(
                "INSERT INTO groups VALUES (?, NULL, ?)",
                ((start + b"conversation:" + conv, conv) for start, conv in convs),
            )
            db.execute("CREATE INDEX units_conv ON units (conv, sortkey)")
        else:
            db.execute("INSERT INTO groups SELECT sortkey, id, NULL FROM units")
        db.execute("CREATE INDEX groups_order ON groups (sortkey)")
        db.execute("COMMIT")
        (self.units_count,) = db.execute("SELECT COUNT(*) FROM groups").fetchone()

    def units(self) -> Iterator[Unit]:
        """The units, in start order (module docstring); one in memory at a time."""
        db = self._db
        rows = db.execute(
            "SELECT g.conv, u.data FROM groups g LEFT JOIN units u ON u.id = g.unit"
            " ORDER BY g.sortkey"
        )
        for conv, data in rows:
            if conv is None:
                yield _unit(_load(data))
                continue
            members = [
                _unit(_load(d))
                for (d,) in db.execute(
                    "SELECT data FROM units WHERE conv = ? ORDER BY sortkey", (conv,)
                )
            ]
            name = bytes(conv).decode("utf-8", "surrogatepass")
            first = members[0]
            merged = Unit(f"conversation:{name}", first.trace_id, [], [], name)
            for m in members:
                merged.roots.extend(m.roots)
                merged.spans.extend(m.spans)
            yield merged

    def use_case(self, case_id: str, make: Callable[[], Case]) -> tuple[Case, int, bool]:
        """``(case, repeat, new)`` for one more trial of ``case_id``: the case first stored
        under that id (``make()`` stores it the first time), the trial's repeat number, and
        whether this is the id's first use.

        The newest cases wait in memory (at most :data:`_PENDING` of them) and go to the
        database in one statement; an id not in the Bloom filter of the ids stored is new
        without asking the database. So a trial of a new case costs no query (a query
        each was 60-85 µs a trial, 11 % of an import: bench/import_traces.py)."""
        key = _text(case_id)
        held = self._pending.get(key)
        if held is not None:
            held[0] += 1
            return held[1], held[0] - 1, False
        if self._seen.has(key):
            row = self._db.execute("SELECT n, data FROM cases WHERE id = ?", (key,)).fetchone()
            if row is not None:  # back to memory; the count is written with the next flush
                n, data = row
                stored: Case = pickle.loads(data)
                self._hold(key, n + 1, stored)
                return stored, n, False
        case = make()
        self._hold(key, 1, case)
        return case, 0, True

    def _hold(self, key: bytes, n: int, case: Case) -> None:
        self._pending[key] = [n, case]
        if len(self._pending) >= _PENDING:
            self._flush_cases()

    def _flush_cases(self) -> None:
        dump = pickle.dumps
        rows = [
            (k, n, dump(c, protocol=pickle.HIGHEST_PROTOCOL)) for k, (n, c) in self._pending.items()
        ]
        self._db.execute("BEGIN")  # one transaction: a commit per row was 65 µs a case
        try:
            self._db.executemany("INSERT OR REPLACE INTO cases VALUES (?, ?, ?)", rows)
        finally:
            self._db.execute("COMMIT")
        for k in self._pending:
            self._seen.add(k)
        self._pending.clear()

    def close(self) -> None:
        """Close (so drop) the database (idempotent)."""
        self._db.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
