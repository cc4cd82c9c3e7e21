"""The tools of the ``tool_grounding`` suite and the small SQLite database behind them.

The database describes a made-up company (employees, shipments, stock). Its values are
invented codes that no model can know, so an answer holding one proves the tool was used.
It is built from the packaged ``data/tool_grounding_db.json`` on first use, in a cache
directory (``$AGENTEVAL_CACHE_DIR``, else
``$XDG_CACHE_HOME/agenteval``, else ``~/.cache/agenteval``), under a name holding the hash
of its source so a changed source builds a new file. Building is atomic (written aside,
then renamed), so concurrent first uses are safe.

The three tool functions are plain Python: a ``--agent module:fn`` agent can import and
call them, and the built-in tool loop can offer them (``ToolSet.from_functions(TOOLS)``).
An unknown key raises ``LookupError`` (recorded as the call's error).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

_TABLES = {
    "employees": ("badge_id", ("badge_id", "name", "team", "desk_code", "parking_spot")),
    "shipments": ("tracking_id", ("tracking_id", "status", "depot_code", "seal_number", "eta")),
    "inventory": ("sku", ("sku", "description", "bin_code", "quantity", "supplier_ref")),
}
_ROW_NAME = {"employees": "employee", "shipments": "shipment", "inventory": "item"}


def _source() -> bytes:
    return (
        resources.files("agenteval.benchmarks").joinpath("data/tool_grounding_db.json").read_bytes()
    )


def _cache_dir(cache_dir: str | Path | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("AGENTEVAL_CACHE_DIR"):
        return Path(os.environ["AGENTEVAL_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agenteval"


def database_path(cache_dir: str | Path | None = None) -> Path:
    """The SQLite file of the suite, built from the packaged source when missing."""
    src = _source()
    digest = hashlib.sha256(src).hexdigest()[:12]
    folder = _cache_dir(cache_dir) / "benchmarks"
    path = folder / f"tool_grounding-{digest}.sqlite"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    try:
        _build(Path(tmp), json.loads(src))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _build(path: Path, data: dict[str, list[dict[str, Any]]]) -> None:
    with sqlite3.connect(path) as db:
        for table, (key, cols) in _TABLES.items():
            defs = ", ".join(f"{c} TEXT PRIMARY KEY" if c == key else f"{c}" for c in cols)
            db.execute(f"CREATE TABLE {table} ({defs})")
            db.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' for _ in cols)})",
                [tuple(row[c] for c in cols) for row in data[table]],
            )
    # the connection context manager commits; close explicitly for Windows-style locking
    sqlite3.connect(path).close()


def _lookup(table: str, value: str) -> dict[str, Any]:
    key, cols = _TABLES[table]
    uri = f"file:{database_path()}?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    try:
        row = db.execute(
            f"SELECT {', '.join(cols)} FROM {table} WHERE upper({key}) = upper(?)",
            (value.strip(),),
        ).fetchone()
    finally:
        db.close()
    if row is None:
        raise LookupError(
            f"no {table[:-1] if table != 'inventory' else 'item'} with {key} {value!r}"
        )
    return dict(zip(cols, row, strict=True))


def lookup_employee(badge_id: str) -> dict[str, Any]:
    """Look up an employee in the staff directory by badge id (for example LB-2208).

    Args:
        badge_id: The employee's badge id.
    """
    return _lookup("employees", badge_id)


def track_shipment(tracking_id: str) -> dict[str, Any]:
    """Get the status of a shipment by tracking id (for example TRK-50331).

    Args:
        tracking_id: The shipment's tracking id.
    """
    return _lookup("shipments", tracking_id)


def check_inventory(sku: str) -> dict[str, Any]:
    """Get the stock record of an item by SKU (for example SKU-7781).

    Args:
        sku: The item's stock keeping unit.
    """
    return _lookup("inventory", sku)


TOOLS = (lookup_employee, track_shipment, check_inventory)
"""The suite's tool functions, in the order of :data:`TOOL_DEFINITIONS`."""


def _definition(name: str, arg: str, description: str, example: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {arg: {"type": "string", "description": f"for example {example}"}},
            "required": [arg],
            "additionalProperties": False,
        },
    }


TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    _definition(
        "lookup_employee",
        "badge_id",
        "Look up an employee of Larkspur Logistics by badge id.",
        "LB-2208",
    ),
    _definition(
        "track_shipment",
        "tracking_id",
        "Get the status of a Larkspur Logistics shipment by tracking id.",
        "TRK-50331",
    ),
    _definition(
        "check_inventory", "sku", "Get the stock record of a warehouse item by SKU.", "SKU-7781"
    ),
)
"""What the agent is offered: one definition per tool."""


def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    """Call the suite tool ``name`` with ``arguments``; KeyError for an unknown tool name."""
    fn = {f.__name__: f for f in TOOLS}[name]
    return fn(**arguments)
