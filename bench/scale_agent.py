"""The CPU-bound agent of ``bench/scale.py``: pure-Python work holding the GIL per case.

``busy(case)`` spins for $SCALE_AGENT_MS milliseconds of this process's CPU time (default
5) in a pure-Python loop, then answers; ``SCALE_AGENT_MS=0`` answers at once (what the
executors themselves cost per trial).
"""

from __future__ import annotations

import os
import time
from typing import Any

_MS = float(os.environ.get("SCALE_AGENT_MS", "5")) / 1000


def busy(case: Any) -> str:
    end = time.thread_time() + _MS
    x = 0
    while time.thread_time() < end:
        for i in range(200):
            x += i * i
    return f"answer {case.id} {x % 7}"
