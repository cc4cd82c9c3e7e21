"""Agents that misbehave, for ``test_runner_robustness*.py`` (run by the real CLI).

Each is ``_robust_agents:NAME``; the behaviour is chosen by the case id where it varies.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

_FOREVER = threading.Event()  # never set: a wait on it is a hang no timeout can end


class AgentBaseError(BaseException):
    """Not an Exception: a plain ``except Exception`` misses it."""


def half_emoji(case: Any) -> str:
    """An answer ending in a lone surrogate (half of U+1F600), also in a tool call."""
    return {  # type: ignore[return-value]
        "output": f"{case.id} \ud83d",
        "tool_calls": [{"name": "look\udc00up", "arguments": {"q\ud83d": "x"}, "result": "\ude00"}],
    }


def unencodable(case: Any) -> Any:
    """``object()`` in metadata for case ids starting with ``bad``; a plain answer else."""
    if case.id.startswith("bad"):
        return {"output": "fine text", "metadata": {"handle": {"inner": [1, object()]}}}
    return "ok"


def exits(case: Any) -> str:
    """``sys.exit(0)`` / a ``BaseException`` / ``KeyboardInterrupt`` by case id."""
    if case.id == "exit0":
        sys.exit(0)
    if case.id == "base":
        raise AgentBaseError("not an Exception")
    if case.id == "kbd":
        raise KeyboardInterrupt
    return "ok"


def hangs(case: Any) -> str:
    """Case ids starting with ``hang`` never return (a sync agent holding its thread)."""
    if case.id.startswith("hang"):
        _FOREVER.wait()
    return "ok"


def slow(case: Any) -> str:
    """Answers after 0.2 s (a sync agent, so trials stay in flight for a while)."""
    time.sleep(0.2)
    return f"answer {case.id}"


def quick(case: Any) -> str:
    """Answers at once."""
    return f"answer {case.id}"


def fails_some(case: Any) -> Any:
    """Fails (``agent_error``) for case ids starting with ``f``."""
    if case.id.startswith("f"):
        return {"failure": {"cause": "agent_error", "message": "scripted failure"}}
    return "ok"


def hangs_a_bit(case: Any) -> str:
    """Answers at once for ``c0`` and ``c1``, after 3 s for every other case."""
    if case.id not in ("c0", "c1"):
        time.sleep(3)
    return "ok"
