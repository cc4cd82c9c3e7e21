"""A Python agent for the conversation crash tests (``_conversation_agent:answer``).

It logs every call (case, turn, conversation id, pid) to ``CONV_LOG``; in turn 1 (0-based)
of case ``slow`` it touches ``CONV_MARK`` and then sleeps ``CONV_SLEEP`` seconds, so a
test can kill or interrupt the run in the middle of that conversation. In turn 1 of case
``boom`` it raises (a failed trial, which ``--resume`` keeps as it is).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


def answer(case: Any) -> str:
    turn = case.metadata.get("turn")
    with open(os.environ["CONV_LOG"], "a", encoding="utf-8") as f:
        entry = {"case": case.id, "turn": turn, "cid": case.metadata.get("conversation_id")}
        f.write(json.dumps({**entry, "pid": os.getpid()}) + "\n")
    if case.id == "boom" and turn == 1:
        raise RuntimeError("boom in turn 1")
    if case.id == "slow" and turn == 1:
        Path(os.environ["CONV_MARK"]).touch()
        time.sleep(float(os.environ.get("CONV_SLEEP", "0")))
    return f"answer to turn {turn}"
