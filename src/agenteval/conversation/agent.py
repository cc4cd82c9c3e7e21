"""The conversation runner: an :class:`~agenteval.agents.base.Agent` wrapping the agent
under test, so a conversation is one trial to the runner (resume, repeats, pass^k, the
gate and reports work on it unchanged).

For a case without ``turns``, ``user`` or ``initial_state`` it calls the inner agent
once, exactly as without it. Otherwise, for each trial:

1. a fresh database is built from ``initial_state`` and made current for the tools
   (:mod:`agenteval.conversation.state`);
2. for each user turn (scripted, or from the simulated user) the inner agent is called
   once with a per-turn copy of the case whose ``input`` is the **whole history** so far
   as chat messages (user messages, the agent's earlier tool calls and results, its
   answers) ending with the new user message, and whose ``metadata`` carries
   ``conversation_id`` (the same for every turn of this trial, different for every trial)
   and ``turn`` (0-based). HTTP agents see them as ``{conversation_id}`` and ``{turn}`` in
   their body template. The agent is called one turn at a time, never concurrently within
   a conversation, so an agent may keep its own per-conversation state keyed by
   ``conversation_id``;
3. the conversation ends when the script runs out, the simulated user stops (returns None
   or writes the stop phrase), ``user.max_turns`` agent turns were taken, or the agent
   gives no answer;
4. the final database is read into the trial and the turns are recorded
   (:mod:`agenteval.conversation.record`).

A failure of the agent in any turn (timeout, HTTP error, exception) or of the simulated
user fails the whole trial with that cause. The trial keeps what happened before: the
transcript and calls, ``metadata.conversation`` with ``ended: "failed"`` (the turn the
agent failed in is recorded with ``failed: true`` and the calls it made), and the database
as it was left (``metadata.state``; ``metadata.state_error`` when it cannot be read). The
per-trial timeout (``--timeout``) bounds the whole conversation. Nothing of a trial is
written before it ends, so a conversation cut by a crash is run again, whole, by
``--resume``, as is one cancelled by Ctrl-C twice.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agenteval.agents.base import Agent, AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.conversation.state import snapshot, trial_database
from agenteval.trials.trial import ToolCall

if TYPE_CHECKING:
    from agenteval.conversation.users import SimulatedUser

FAILED_SNAPSHOT_WAIT_S = 0.2
"""How long a failed trial's snapshot waits for a lock another thread holds on its database."""

USER_FAILURE = "user_simulator"
"""The failure cause of a trial whose simulated user failed (or was not given)."""


class ConversationAgent:
    """Runs conversational and stateful cases over ``inner`` (module docstring)."""

    def __init__(self, inner: Agent, user: SimulatedUser | None = None) -> None:
        self.inner = inner
        self.user = user

    def describe(self) -> dict[str, Any]:
        """The inner agent's description, plus ``user`` when a simulated user is given."""
        desc = dict(self.inner.describe())
        if self.user is not None:
            desc["user"] = self.user.describe()
        return desc

    async def start(self) -> None:
        """Start the inner agent, then the simulated user."""
        await self.inner.start()
        if self.user is not None:
            await self.user.start()

    async def close(self) -> None:
        """Close the simulated user and the inner agent."""
        try:
            if self.user is not None:
                await self.user.close()
        finally:
            await self.inner.close()

    async def settle(self, rec: Recorder, out: AgentOutput | None) -> AgentOutput | None:
        """The inner agent's ``settle`` (late OTLP spans,
        :mod:`agenteval.traces.receiver_agent`), once per trial: every turn of a
        conversation runs in the trial's one trace, so its spans are the trial's."""
        settle = getattr(self.inner, "settle", None)
        return out if settle is None else cast("AgentOutput | None", await settle(rec, out))

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """One trial: a plain call, or a whole conversation (module docstring)."""
        if not case.conversational and case.initial_state is None:
            return await self.inner.run(case, repeat, rec)
        with trial_database(case.initial_state) as db:
            try:
                if case.conversational:
                    out = await _Conversation(self, case, repeat, rec).run()
                else:
                    out = await self.inner.run(case, repeat, rec)
            except BaseException:  # failed, timed out, cancelled: keep the state it left
                if db is not None:
                    rec.metadata.update(_failed_state(db))
                raise
            if db is not None:
                out.metadata = {**out.metadata, "state": snapshot(db)}
        return out


def _failed_state(db: Path) -> dict[str, Any]:
    """``{"state": snapshot}`` of a failed trial's database, or ``{"state_error": why}``
    when it cannot be read now (e.g. a timed-out agent's thread still holds a write lock:
    waited for briefly, since this runs on the event loop)."""
    import sqlite3

    try:
        return {"state": snapshot(db, busy_timeout_s=FAILED_SNAPSHOT_WAIT_S)}
    except (sqlite3.Error, OSError) as e:
        return {"state_error": f"{type(e).__name__}: {e}"[:500]}


class _Conversation:
    """One conversation: the history, the turns recorded, the user's own recorder."""

    def __init__(self, owner: ConversationAgent, case: Case, repeat: int, rec: Recorder) -> None:
        self.owner = owner
        self.case = case
        self.repeat = repeat
        self.rec = rec
        self.id = f"{case.id}/{repeat}/{uuid.uuid4().hex[:12]}"
        self.history: list[dict[str, Any]] = []  # what the agent is sent
        self.visible: list[dict[str, Any]] = []  # what the user sees
        self.calls: list[ToolCall] = []
        self.turns: list[dict[str, Any]] = []
        self.user_rec = Recorder()
        self.stop_message: str | None = None
        rec.messages = self.history  # the live transcript: kept if the trial fails

    async def _next_user_message(self, i: int) -> str | None:
        case = self.case
        if case.turns is not None:
            return case.turns[i].user if i < len(case.turns) else None
        spec = case.user
        assert spec is not None
        if i == 0 and spec.first_message:
            return spec.first_message
        user = self.owner.user
        if user is None:
            raise AgentFailure(
                USER_FAILURE,
                "the case has a simulated user ('user') but the run has none: pass --user"
                " MODULE:FN or --user-endpoint URL --user-model NAME",
            )
        try:
            text = await user.reply(spec, list(self.visible), self.user_rec, repeat=self.repeat)
        except AgentFailure as e:
            raise AgentFailure(USER_FAILURE, f"the simulated user failed ({e.cause}): {e}") from e
        except Exception as e:
            raise AgentFailure(
                USER_FAILURE, f"the simulated user raised {type(e).__name__}: {e}"[:2000]
            ) from e
        if text is not None and (spec.stop in text or not text.strip()):
            self.stop_message = text  # the stop phrase, or nothing left to say: the end
            text = None
        if text is None and i == 0:
            raise AgentFailure(
                USER_FAILURE, "the simulated user ended the conversation before its first message"
            )
        return text

    async def run(self) -> AgentOutput:
        case = self.case
        limit = len(case.turns) if case.turns is not None else case.user.max_turns  # type: ignore[union-attr]
        ended = "max_turns" if case.user is not None else "script_end"
        out: AgentOutput | None = None
        try:
            for i in range(limit):
                text = await self._next_user_message(i)
                if text is None:
                    ended = "user_stop"
                    break
                out = await self._turn(i, text)
                if out.output is None:
                    ended = "no_answer"
                    break
        except BaseException:  # the trial fails: it keeps the turns so far
            self.rec.metadata["conversation"] = self._record("failed")
            raise
        last = out or AgentOutput(output=None)
        return AgentOutput(
            output=last.output,
            tool_calls=self.calls,
            tools=last.tools,
            messages=self.history,
            metadata={**last.metadata, "conversation": self._record(ended)},
        )

    def _record(self, ended: str) -> dict[str, Any]:
        """``metadata.conversation`` (:mod:`agenteval.conversation.record`)."""
        conversation: dict[str, Any] = {"id": self.id, "ended": ended, "turns": self.turns}
        if self.owner.user is not None and self.case.user is not None:
            conversation["user"] = self._user_record()
        return conversation

    def _user_record(self) -> dict[str, Any]:
        user = self.owner.user
        record: dict[str, Any] = {
            "kind": user.describe().get("kind") if user is not None else None,
            "usage": [u.model_dump() for u in self.user_rec.usage],
            "retries": [r.model_dump() for r in self.user_rec.retries],
        }
        if self.stop_message is not None:
            record["stop_message"] = self.stop_message
        return record

    async def _turn(self, i: int, text: str) -> AgentOutput:
        message = {"role": "user", "content": text}
        self.history.append(message)
        self.visible.append(dict(message))
        turn_case = self.case.model_copy(
            update={
                "input": [dict(m) for m in self.history],
                "metadata": {**self.case.metadata, "conversation_id": self.id, "turn": i},
            }
        )
        turn_rec = Recorder()
        turn_rec.trace = self.rec.trace  # every turn in the trial's one trace (traceparent)
        start = len(self.calls)
        t0 = time.perf_counter()
        try:
            out = await self.owner.inner.run(turn_case, self.repeat, turn_rec)
        except BaseException:
            self.rec.trace = self.rec.trace or turn_rec.trace
            self._merge(turn_rec, turn_rec.tool_calls, turn_rec.messages, text, None)
            self._add_turn(text, None, start, turn_rec, t0, failed=True)
            raise
        self.rec.trace = self.rec.trace or turn_rec.trace  # the first turn's adapter opened it
        calls = out.tool_calls if out.tool_calls is not None else turn_rec.tool_calls
        transcript = out.messages if out.messages is not None else turn_rec.messages
        self._merge(turn_rec, calls, transcript, text, out.output)
        self._add_turn(text, out.output, start, turn_rec, t0)
        if out.output is not None:
            self.visible.append({"role": "assistant", "content": out.output})
        return out

    def _add_turn(
        self,
        text: str,
        output: str | None,
        start: int,
        turn_rec: Recorder,
        t0: float,
        *,
        failed: bool = False,
    ) -> None:
        """Record one turn; ``failed``: the agent failed in it (its calls so far kept)."""
        turn: dict[str, Any] = {
            "user": text,
            "output": output,
            "calls": [start, len(self.calls)],
            "usage": [u.model_dump() for u in turn_rec.usage],
            "latency_s": round(time.perf_counter() - t0, 6),
        }
        if failed:
            turn["failed"] = True
        self.turns.append(turn)

    def _merge(
        self,
        turn_rec: Recorder,
        calls: list[ToolCall],
        transcript: list[dict[str, Any]] | None,
        text: str,
        output: str | None,
    ) -> None:
        """Add one turn's observations to the trial's recorder and transcript."""
        self.calls.extend(calls)
        self.rec.tool_calls = list(self.calls)
        for u in turn_rec.usage:
            self.rec.add_usage(u.model, u.input_tokens, u.output_tokens)
        self.rec.retries.extend(turn_rec.retries)
        self.rec.cached.extend(turn_rec.cached)  # calls the replay cache served
        self.rec.active_s += turn_rec.active_s
        self.history.extend(_new_messages(transcript, text, output))


def _new_messages(
    transcript: list[dict[str, Any]] | None, text: str, output: str | None
) -> list[dict[str, Any]]:
    """What one turn added after the user's message: the agent's tool calls and results
    (when its transcript shows them) and its answer."""
    new: list[dict[str, Any]] = []
    if transcript:
        users = [
            j for j, m in enumerate(transcript) if isinstance(m, dict) and m.get("role") == "user"
        ]
        same = [j for j in users if transcript[j].get("content") == text]
        at = same[-1] if same else users[-1] if users else None  # a template rewrote it
        if at is not None:
            new = [dict(x) for x in transcript[at + 1 :] if isinstance(x, dict)]
    if output is not None:
        last = new[-1] if new else None
        if not (last and last.get("role") == "assistant" and last.get("content") == output):
            new.append({"role": "assistant", "content": output})
    return new
