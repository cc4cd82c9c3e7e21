"""Per-trial state: a SQLite database built from a case's ``initial_state`` for each trial.

**The contract for tools.** While a trial of a case with ``initial_state`` runs, the
trial's database path is available to every tool through :func:`current_database` (a
context variable, so it follows the trial into the tool loop's threads and into an
agent's own ``asyncio`` tasks). A tool opens it, reads and writes, and closes it::

    from agenteval.conversation.state import current_database

    def cancel_order(order_id: str) -> str:
        with sqlite3.connect(current_database()) as db:
            db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
        return "cancelled"

Each trial (each repeat of each case) gets a fresh copy in a temporary directory of its
own, so concurrent trials never see each other's writes. When the trial ends, every table
is read into the trial (:func:`snapshot`, recorded under ``metadata.state``) and the
directory is deleted: ``state_match`` scores that snapshot, so ``agenteval rescore`` needs
no database. A trial that fails keeps the snapshot of the database as it left it.
Outside such a trial :func:`current_database` raises ``LookupError``.
"""

from __future__ import annotations

import contextlib
import contextvars
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agenteval.cases.conversation import InitialState

_DB: contextvars.ContextVar[Path] = contextvars.ContextVar("agenteval_trial_database")

MAX_SNAPSHOT_ROWS = 10_000
"""Rows read per table into the trial at most; a bigger table is recorded as truncated."""


def current_database() -> Path:
    """The SQLite file of the trial running in this context; LookupError outside one."""
    try:
        return _DB.get()
    except LookupError:
        raise LookupError(
            "no per-trial database: the case has no initial_state (or this runs outside a trial)"
        ) from None


def current_database_or_none() -> Path | None:
    """:func:`current_database`, or None outside a trial with state."""
    return _DB.get(None)


def build(path: Path, state: InitialState) -> None:
    """Create the database at ``path``: ``state.sql`` statements, then ``state.tables`` rows
    (a table not created by the statements is created with the columns its rows name)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for statement in state.sql or []:
            db.executescript(statement)
        for table, rows in (state.tables or {}).items():
            columns = list(dict.fromkeys(c for row in rows for c in row))
            exists = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
            if not exists:
                cols = ", ".join(f'"{c}"' for c in columns) or '"_"'
                db.execute(f'CREATE TABLE "{table}" ({cols})')
            for row in rows:
                names = ", ".join(f'"{c}"' for c in row)
                marks = ", ".join("?" for _ in row)
                db.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', tuple(row.values()))


def snapshot(path: Path, *, busy_timeout_s: float = 5.0) -> dict[str, Any]:
    """Every table of the database: ``{"tables": {name: {"columns": [...], "rows": [[...]]}}}``
    (rows in ``rowid`` order; a table over :data:`MAX_SNAPSHOT_ROWS` rows gets
    ``"truncated": true``). Bytes values are recorded as hex text. Waits at most
    ``busy_timeout_s`` for a write lock held elsewhere (``sqlite3.OperationalError``)."""
    import sqlite3

    uri = f"{path.resolve().as_uri()}?mode=ro"
    tables: dict[str, Any] = {}
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=busy_timeout_s)) as db:
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        for name in names:
            cur = db.execute(f'SELECT * FROM "{name}" LIMIT {MAX_SNAPSHOT_ROWS + 1}')
            columns = [d[0] for d in cur.description]
            rows = [[_jsonable(v) for v in r] for r in cur.fetchall()]
            entry: dict[str, Any] = {"columns": columns, "rows": rows[:MAX_SNAPSHOT_ROWS]}
            if len(rows) > MAX_SNAPSHOT_ROWS:
                entry["truncated"] = True
            tables[name] = entry
    return {"tables": tables}


def _jsonable(v: Any) -> Any:
    return v.hex() if isinstance(v, bytes) else v


@contextlib.contextmanager
def trial_database(state: InitialState | None) -> Iterator[Path | None]:
    """A fresh database for one trial, current for the ``with`` block (None: no state).

    The temporary directory holding it is removed when the block ends, however it ends.
    """
    if state is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="agenteval-state-") as d:
        path = Path(d) / "state.db"
        build(path, state)
        token = _DB.set(path)
        try:
            yield path
        finally:
            _DB.reset(token)
