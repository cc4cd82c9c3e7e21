"""Agents for the worker tests: each records its process id in $WORKER_PIDS_DIR.

``answer``: a deterministic answer after $WORKER_AGENT_SLEEP seconds (default 0);
``poison``: like ``answer``, but the case ``poison`` ends its worker process at once;
``locked``: an agent object holding a lock (cannot be pickled);
``make_agent``: a factory building an agent with a lock, once per process.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

FACTORY_CALLS = 0


def _note_pid() -> None:
    where = os.environ.get("WORKER_PIDS_DIR")
    if where:
        (Path(where) / str(os.getpid())).touch()


def answer(case: Any) -> str:
    _note_pid()
    time.sleep(float(os.environ.get("WORKER_AGENT_SLEEP", "0")))
    return f"echo: {case.input}"


def poison(case: Any) -> str:
    if case.id == "poison":
        os._exit(7)  # what a segfaulting extension or the OOM killer does to a worker
    return answer(case)


class Locked:
    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, case: Any) -> str:
        with self.lock:
            return answer(case)


locked = Locked()


def make_agent() -> Any:
    global FACTORY_CALLS
    FACTORY_CALLS += 1
    lock = threading.Lock()
    built_in = os.getpid()

    def agent(case: Any) -> dict[str, Any]:
        with lock:
            return {
                "output": answer(case),
                "metadata": {"pid": built_in, "factory_calls": FACTORY_CALLS},
            }

    return agent
