"""A rule-based ticket-desk agent: `--agent agent:answer` (docs/conversations.md)."""

import re
import sqlite3

from agenteval.conversation.state import current_database


def close_ticket(ticket: str) -> str:
    """The tool: close a ticket in this trial's own database."""
    with sqlite3.connect(current_database()) as db:
        db.execute("UPDATE tickets SET status = 'closed' WHERE id = ?", (ticket,))
    return f"{ticket} closed"


def answer(case):
    history = case.input  # every message so far; the last one is the user's new message
    said = history[-1]["content"]
    asked = history[-2]["content"] if len(history) > 1 else ""
    ticket = re.search(r"T-\d+", " ".join(m["content"] or "" for m in history))
    if said.lower().startswith("yes") and "Shall I close" in asked:
        result = close_ticket(ticket.group())
        call = {"name": "close_ticket", "arguments": {"ticket": ticket.group()}, "result": result}
        return {"output": f"{result}.", "tool_calls": [call]}
    if ticket:
        return f"Shall I close {ticket.group()}? Reply yes to confirm."
    if said.startswith("Hello"):
        return "Hello! How can I help?"
    return "I can close your tickets."


def crashes(case):
    """answer(), but it crashes after closing the ticket, before it can reply."""
    out = answer(case)
    if isinstance(out, dict):
        raise ConnectionError("lost the connection after closing the ticket")
    return out
