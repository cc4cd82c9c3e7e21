"""``--group conversation`` live: the done traces of a conversation, held until it is done.

A conversation is the traces whose agent invocations carry the same
``gen_ai.conversation.id`` (or ``session.id``), as ``import-traces --group conversation``
has it (:mod:`agenteval.traces.units`). Live, nothing says a conversation is over, so it
is **done** when

- no trace of it has become done for ``idle_s`` (``--conversation-idle``, 5 minutes by
  default: the time a user takes to reply), or
- ``max_wait_s`` (``--conversation-max-wait``, 30 minutes) passed since its first trace
  was done,

on the monitor's clock, whichever comes first. Then every trace held for it is mapped
together, exactly as ``import-traces --group conversation`` maps a file holding them,
into one multi-turn trial (the invocations in start order), and written to the window of
its first invocation's start. A trace whose invocations carry no conversation id is
written as soon as it is done, as without ``--group``. A trace whose invocations belong
to several conversations (a batch job's trace) holds them together: they are done, and
mapped, as one group, so each conversation is the one trial ``import-traces`` makes of
it.

Held traces keep their spans in memory and their write-ahead log segments on disk (a
restart replays them, and the conversation is done again ``idle_s`` after), and they keep
their window open. A trace of a conversation that arrives after the conversation was
written makes a trial of its own under the same case id (the next repeat): counted as
``conversations_split_total``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agenteval.monitor.pending import PendingTrace

__all__ = ["Conversations", "Held"]


@dataclass(slots=True)
class Held:
    """The done traces of one conversation not yet written."""

    conversation: str
    first: float
    last: float
    start_ns: int | None
    traces: list[PendingTrace] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    """Every conversation held together (``conversation`` first): traces that share one
    of them hold them as one group."""


class Conversations:
    """The conversations held (module docstring); ``written`` remembers the ids written
    (for ``horizon_s``) so that a trace arriving after is counted as a split."""

    def __init__(self, *, idle_s: float, max_wait_s: float, horizon_s: float) -> None:
        self.idle_s = idle_s
        self.max_wait_s = max_wait_s
        self.horizon_s = horizon_s
        self.held: dict[str, Held] = {}
        self.written: dict[str, float] = {}
        self.split = 0

    def groups(self) -> list[Held]:
        """Each group held once (``held`` has it under every id of the group)."""
        return list({id(h): h for h in self.held.values()}.values())

    @property
    def spans(self) -> int:
        """Spans and log records held (the memory bound counts them)."""
        return sum(len(t.spans) + len(t.logs) for h in self.groups() for t in h.traces)

    def add(
        self, conversations: list[str], trace: PendingTrace, start_ns: int | None, now: float
    ) -> None:
        """Hold a done trace of ``conversations`` (its invocations' ids, at least one):
        with the group held for any of them, those groups merged."""
        found = list({id(g): g for c in conversations if (g := self.held.get(c))}.values())
        if not found:
            if any(c in self.written for c in conversations):
                self.split += 1
            found = [Held(conversations[0], now, now, start_ns)]
        h, *others = found
        for o in others:
            h.traces.extend(o.traces)
            h.first = min(h.first, o.first)
            if o.start_ns is not None and (h.start_ns is None or o.start_ns < h.start_ns):
                h.start_ns = o.start_ns
        h.ids = list(dict.fromkeys([h.conversation, *h.ids, *conversations]))
        h.ids += [c for o in others for c in o.ids if c not in h.ids]
        for c in h.ids:
            self.held[c] = h
        h.traces.append(trace)
        h.last = now
        if start_ns is not None and (h.start_ns is None or start_ns < h.start_ns):
            h.start_ns = start_ns

    def due(self, now: float) -> list[Held]:
        """Take the conversations done by ``now`` (oldest first)."""
        out = [
            h
            for h in self.groups()
            if now - h.last >= self.idle_s or now - h.first >= self.max_wait_s
        ]
        for h in out:
            for c in h.ids:
                del self.held[c]
        return out

    def settled(self, held: list[Held], now: float) -> None:
        """``held`` were written: remember their ids, forget those past the horizon."""
        for h in held:
            for c in h.ids or [h.conversation]:
                self.written[c] = now
        for cid in [c for c, t in self.written.items() if now - t >= self.horizon_s]:
            del self.written[cid]
