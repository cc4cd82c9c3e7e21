"""The HTML report's view of a conversation: its turns as a chat, with each turn's calls.

Built from ``metadata.conversation`` (:mod:`agenteval.conversation.record`); a trial
without one (every single-turn case, every older run) has no chat and is shown as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agenteval.conversation.record import conversation_of
from agenteval.trials.trial import Trial


@dataclass(slots=True)
class ChatTurn:
    """One turn as shown: the user's message, the calls made for it, the agent's answer."""

    user: str
    output: str | None
    latency: str
    calls: list[Any] = field(default_factory=list)  # the report's ToolRow objects
    failed: bool = False  # the agent failed in this turn (the trial failed here)


@dataclass(slots=True)
class Chat:
    """A conversation as shown: its turns, how it ended, the user's closing message."""

    ended: str
    turns: list[ChatTurn] = field(default_factory=list)
    stop_message: str | None = None


def chat_of(
    trial: Trial,
    tool_rows: list[Any],
    text: Callable[[Any], str],
    secs: Callable[[float | None], str],
) -> Chat | None:
    """The chat of a conversational trial (None otherwise). ``tool_rows`` are the report's
    rows of ``trial.tool_calls`` (same order); ``text`` cuts long text; ``secs`` formats."""
    conv = conversation_of(trial)
    if conv is None:
        return None
    turns = []
    for t in conv["turns"]:
        if not isinstance(t, dict):
            continue
        span = t.get("calls")
        ok = isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span)
        start, end = (span[0], span[1]) if ok and span is not None else (0, 0)
        latency = t.get("latency_s")
        output = t.get("output")
        turns.append(
            ChatTurn(
                user=text(t.get("user")),
                output=text(output) if isinstance(output, str) else None,
                latency=secs(float(latency) if isinstance(latency, int | float) else None),
                calls=tool_rows[max(0, start) : max(0, end)],
                failed=t.get("failed") is True,
            )
        )
    user = conv.get("user")
    stop = user.get("stop_message") if isinstance(user, dict) else None
    return Chat(
        ended=str(conv.get("ended", "")),
        turns=turns,
        stop_message=text(stop) if isinstance(stop, str) else None,
    )
