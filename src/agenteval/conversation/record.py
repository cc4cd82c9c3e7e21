"""How a conversation is recorded on its trial, and how scorers read it back.

One trial = one conversation. The trial's usual fields hold the whole of it: ``output`` is
the agent's last answer, ``tool_calls`` every call of every turn in order, ``usage``,
``retries`` and ``latency`` the totals, ``messages`` the transcript (user turns, the
agent's tool calls and results, its answers). ``metadata.conversation`` adds the turns::

    {"id": "refund-7/0/3f2a...",          # the conversation id the agent was given
     "ended": "script_end",               # script_end | user_stop | max_turns | no_answer | failed
     "turns": [{"user": "...", "output": "...", "calls": [0, 2],   # trial.tool_calls[0:2]
                "usage": [{"model": ..., "input_tokens": ..., "output_tokens": ...}],
                "latency_s": 0.41}, ...],
     "user": {"kind": "python", "usage": [...], "retries": [...], "stop_message": "..."}}

and ``metadata.state`` the final database of a case with ``initial_state``
(:func:`agenteval.conversation.state.snapshot`). Trials without these keys — every trial
of a single-turn case, every run made before conversations existed — read as one turn
(:func:`turns_of`).

A trial that failed (the agent raised or timed out in a turn, the simulated user failed,
Ctrl-C twice) keeps both, as far as they got: ``ended`` is ``"failed"`` (the trial's
``failure`` says why), the turn the agent failed in is recorded with ``"failed": true``,
its ``output`` null and the calls it made before failing (so ``procedure`` sees them with
that turn's user message), and ``metadata.state`` is the database as the trial left it
(``metadata.state_error`` instead when it could not be read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agenteval.cases.case import Case
from agenteval.trials.trial import ToolCall, Trial, Usage

ENDINGS = ("script_end", "user_stop", "max_turns", "no_answer", "failed")
"""Why a conversation ended: the script ran out, the user stopped (the stop phrase or
no reply), the user's ``max_turns`` was reached, the agent gave no answer, or the trial
failed (cut: the trial's ``failure`` says why)."""


@dataclass(slots=True)
class TurnView:
    """One turn as scorers see it: the user's message, the answer, the calls made for it."""

    index: int
    user: str
    output: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    latency_s: float | None = None


def conversation_of(trial: Trial) -> dict[str, Any] | None:
    """``metadata.conversation`` of the trial when it is well formed, else None."""
    conv = trial.metadata.get("conversation")
    if not isinstance(conv, dict) or not isinstance(conv.get("turns"), list):
        return None
    return conv


def turns_of(case: Case, trial: Trial) -> list[TurnView]:
    """The trial's turns; a trial without a conversation record is one turn (the case's
    input, the trial's output and all its calls)."""
    conv = conversation_of(trial)
    if conv is None:
        return [TurnView(0, case.input_text(), trial.output, list(trial.tool_calls))]
    out = []
    calls = trial.tool_calls
    for i, t in enumerate(conv["turns"]):
        if not isinstance(t, dict):
            continue
        span: Any = t.get("calls")
        start, end = (span[0], span[1]) if _is_span(span) else (0, 0)
        usage = [Usage.model_validate(u) for u in t.get("usage") or [] if isinstance(u, dict)]
        latency = t.get("latency_s")
        out.append(
            TurnView(
                index=i,
                user=str(t.get("user", "")),
                output=t.get("output") if isinstance(t.get("output"), str) else None,
                tool_calls=list(calls[start:end]),
                usage=usage,
                latency_s=float(latency) if isinstance(latency, int | float) else None,
            )
        )
    return out


def _is_span(span: Any) -> bool:
    return (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in span)
        and span[0] <= span[1]
    )


def state_of(trial: Trial) -> dict[str, Any] | None:
    """``metadata.state`` (the final database) when well formed, else None."""
    state = trial.metadata.get("state")
    if not isinstance(state, dict) or not isinstance(state.get("tables"), dict):
        return None
    return state
