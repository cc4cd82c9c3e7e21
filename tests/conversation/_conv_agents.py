"""Agents and simulated users for the conversation tests (imported by CLI subprocesses).

- ``remembering``: a Python agent that keeps its own state per conversation (keyed by
  ``conversation_id``) and answers with what it saw: the turn, how many messages the
  history held, and the last user message. With ``CONV_LOG`` set it appends one JSON line
  per call (case, repeat, turn, conversation id, pid).
- ``counter``: a stateful agent: each turn adds 1 to ``counter.n`` in the trial's database
  and answers with the new value (case ``flaky``, repeat 1, adds 2 in its first turn).
- ``slow_second_turn``: like ``remembering``, but turn 1 (0-based) of case ``slow`` sleeps
  ``CONV_SLEEP`` seconds after touching ``CONV_MARK`` (to be killed mid-conversation).
- users: ``polite`` (three messages, then the stop phrase), ``silent`` (ends at once with
  None), ``broken`` (raises), ``breaks_later`` (an opening message, then raises),
  ``chatty`` (never stops).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from agenteval.conversation.state import current_database

_SEEN: dict[str, int] = {}


def _log(case: Any, repeat: int) -> None:
    target = os.environ.get("CONV_LOG")
    if target:
        entry = {
            "case": case.id,
            "repeat": repeat,
            "turn": case.metadata.get("turn"),
            "cid": case.metadata.get("conversation_id"),
            "pid": os.getpid(),
        }
        with open(target, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def remembering(case: Any, repeat: int) -> str:
    _log(case, repeat)
    cid = str(case.metadata.get("conversation_id"))
    _SEEN[cid] = _SEEN.get(cid, 0) + 1
    history = case.input if isinstance(case.input, list) else [case.input]
    last = case.input_text()
    return f"call {_SEEN[cid]} turn {case.metadata.get('turn')} saw {len(history)}: {last}"


def counter(case: Any, repeat: int) -> dict[str, Any]:
    step = 2 if case.id == "flaky" and repeat == 1 and case.metadata.get("turn") == 0 else 1
    with sqlite3.connect(current_database()) as db:
        db.execute("UPDATE counter SET n = n + ?", (step,))
        (n,) = db.execute("SELECT n FROM counter").fetchone()
    call = {"name": "increment", "arguments": {}, "result": n}
    return {"output": f"n={n}", "tool_calls": [call]}


def counter_or_echo(case: Any, repeat: int) -> Any:
    """``counter`` for a case with state, else the input echoed."""
    if case.initial_state is None:
        return case.input_text()
    return counter(case, repeat)


def slow_second_turn(case: Any, repeat: int) -> str:
    _log(case, repeat)
    if case.id == "slow" and case.metadata.get("turn") == 1:
        mark = os.environ.get("CONV_MARK")
        if mark:
            Path(mark).touch()
        time.sleep(float(os.environ.get("CONV_SLEEP", "0")))
    return f"ok {case.metadata.get('turn')}"


def quits(case: Any, repeat: int) -> str | None:
    """Answers the first turn, then gives no answer."""
    return "first" if case.metadata.get("turn") == 0 else None


def sleepy(case: Any, repeat: int) -> str:
    time.sleep(0.4)
    return f"slept {case.metadata.get('turn')}"


def number(user: Any, history: list[dict[str, Any]]) -> Any:
    return 3


def polite(user: Any, history: list[dict[str, Any]]) -> str | None:
    said = sum(1 for m in history if m["role"] == "user")
    if said >= 3:
        return f"thanks {user.stop}"
    return f"{user.facts.get('ask', 'hello')} #{said + 1}"


def silent(user: Any, history: list[dict[str, Any]]) -> str | None:
    return None


def broken(user: Any, history: list[dict[str, Any]]) -> str | None:
    raise RuntimeError("the user script broke")


def breaks_later(user: Any, history: list[dict[str, Any]]) -> str | None:
    if not history:
        return "hello"
    raise RuntimeError("the user script broke after the agent's first answer")


def chatty(user: Any, history: list[dict[str, Any]]) -> str | None:
    return "more"


def blank_later(user: Any, history: list[dict[str, Any]]) -> str | None:
    return "hello" if not history else "   "
