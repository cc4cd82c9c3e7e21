"""An agent (``_integrity_agent:answer``) that logs every call, for the run-integrity tests.

``INTEGRITY_CALLS=FILE``: each call appends ``{"pid", "case", "repeat"}`` to FILE.
``INTEGRITY_DELAY=S``: each call sleeps S seconds first (to keep a run busy).
``INTEGRITY_HOLD=FILE``: each call waits while FILE exists (to hold a run mid-way).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any


def answer(case: Any, repeat: int) -> str:
    """The case's expected answer (or "ok"), after logging the call and the delay."""
    log = os.environ.get("INTEGRITY_CALLS")
    if log:
        line = json.dumps({"pid": os.getpid(), "case": case.id, "repeat": repeat})
        with open(log, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    time.sleep(float(os.environ.get("INTEGRITY_DELAY", "0")))
    hold = os.environ.get("INTEGRITY_HOLD")
    while hold and os.path.exists(hold):
        time.sleep(0.02)
    return str(case.expected or "ok")


def other(case: Any) -> str:
    """A different agent, for --resume with another agent."""
    return "other"
