"""A tools module for the tool-loop conversation test: one tool on the trial's database."""

from __future__ import annotations

import sqlite3

from agenteval.conversation.state import current_database


def add(query: str) -> int:
    """Add 1 to the counter and return it.

    Args:
        query: why (any text)
    """
    with sqlite3.connect(current_database()) as db:
        db.execute("UPDATE counter SET n = n + 1")
        (n,) = db.execute("SELECT n FROM counter").fetchone()
    return int(n)
