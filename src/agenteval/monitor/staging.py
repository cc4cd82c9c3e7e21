"""The stages between a done trace and its window: mapping, conversations, the judge.

:meth:`Staging.map` (in the scoring thread) makes each done trace an
:class:`~agenteval.monitor.writing.Item` of trials, or, with ``--group conversation``,
holds a trace of a conversation until the conversation is done
(:mod:`agenteval.monitor.conversations`) and then makes all its traces one item. With a
judge, :meth:`Staging.judge_or_ready` starts a task on the event loop grading an item's
trials (:mod:`agenteval.monitor.judging`); :meth:`Staging.judged` hands back those
finished. What is held keeps its windows open (:meth:`Staging.holding`) and counts
against the memory bound (:meth:`Staging.held_spans`).
"""

from __future__ import annotations

import asyncio
import time

from agenteval._util.say import Say
from agenteval.errors import InputError
from agenteval.monitor.conversations import Conversations, Held
from agenteval.monitor.judging import JudgeStage
from agenteval.monitor.mapping import MapOptions, trace_trials
from agenteval.monitor.metrics import Metrics
from agenteval.monitor.pending import PendingTrace
from agenteval.monitor.windows import window_start
from agenteval.monitor.writing import Item
from agenteval.traces.logs import LogRecord
from agenteval.traces.records import SpanRecord
from agenteval.traces.units import group_units

__all__ = ["Staging"]


class Staging:
    """Done traces on their way to being written (module docstring)."""

    def __init__(
        self,
        mapping: MapOptions,
        say: Say,
        *,
        judge: JudgeStage | None,
        conversations: Conversations | None,
    ) -> None:
        self.mapping = mapping
        self._say = say
        self.judge = judge
        self.conversations = conversations
        self.judging: list[tuple[Item, asyncio.Task[None]]] = []
        """Items whose trials the judge is grading, with the task doing it."""

    def register(self, metrics: Metrics) -> None:
        """Add the judge's and the conversations' counters to ``metrics``."""
        if self.judge is not None:
            metrics.counters.update(self.judge.counters())
            metrics.gauges["judging_traces"] = lambda: sum(len(i.traces) for i, _ in self.judging)
        convs = self.conversations
        if convs is not None:
            metrics.gauges["conversations_held"] = lambda: len(convs.groups())
            metrics.counters["conversations_split_total"] = (
                "Traces of a conversation already written.",
                lambda: convs.split,
            )

    def held_spans(self) -> int:
        """Spans held by conversations and by trials waiting for the judge."""
        n = sum(len(t.spans) + len(t.logs) for i, _ in self.judging for t in i.traces)
        return n + (self.conversations.spans if self.conversations is not None else 0)

    def hold(self, held: list[tuple[list[str], PendingTrace, int | None]], now: float) -> None:
        """Hold the traces :meth:`map` set aside for their conversations."""
        for conv, trace, start in held:
            assert self.conversations is not None
            self.conversations.add(conv, trace, start, now)

    def due(self, now: float) -> list[Held]:
        """The conversations done by ``now``."""
        return self.conversations.due(now) if self.conversations is not None else []

    def map(
        self, due: list[PendingTrace], convs: list[Held]
    ) -> tuple[list[Item], list[tuple[list[str], PendingTrace, int | None]], list[str]]:
        """In the scoring thread: the done traces made trials (those of a conversation
        held instead, with ``--group conversation``), the conversations done made one
        trial each. A trace the mapping cannot read (a value no decoder check caught) is
        dropped with a line."""
        items: list[Item] = []
        held: list[tuple[list[str], PendingTrace, int | None]] = []
        notes: list[str] = []
        for t in due:
            if self.conversations is not None:
                try:
                    conv, start = _trace_conversations(t.spans)
                except (InputError, ValueError, RecursionError):
                    conv, start = [], None  # _item says why
                if conv:
                    held.append((conv, t, start))
                    continue
            items.append(self._item([t], t.spans, t.logs, notes))
        for h in convs:
            spans = [s for t in h.traces for s in t.spans]
            item = self._item(h.traces, spans, [r for t in h.traces for r in t.logs], notes)
            item.held = h
            items.append(item)
        return items, held, notes

    def _item(
        self,
        traces: list[PendingTrace],
        spans: list[SpanRecord],
        logs: list[LogRecord],
        notes: list[str],
    ) -> Item:
        try:
            made, filtered, _skipped = trace_trials(spans, logs, self.mapping)
        except (InputError, ValueError, RecursionError) as e:
            notes.append(f"trace {traces[0].trace_id} cannot be made a trial ({e})")
            return Item(traces, dropped="unreadable")
        if not made:
            return Item(traces, dropped="where" if filtered else "no unit")
        return Item(traces, made)

    def judge_or_ready(self, items: list[Item]) -> list[Item]:
        """Items to write now; those with trials to judge start their judging task."""
        judge = self.judge
        if judge is None:
            return items
        ready = []
        for item in items:
            if not item.made:
                ready.append(item)
                continue
            if not any(judge.sampled(m.trial) for m in item.made):  # written at once
                item.judged = [judge.outside_sample(m.trial) or {} for m in item.made]
                ready.append(item)
                continue

            async def grade(item: Item = item, judge: JudgeStage = judge) -> None:
                got = await asyncio.gather(*(judge.score(m.case, m.trial) for m in item.made))
                item.judged = list(got)

            self.judging.append((item, asyncio.get_running_loop().create_task(grade())))
        return ready

    def judged(self) -> list[Item]:
        """The items whose judging finished (a judge that raised: inconclusive, said)."""
        out, still = [], []
        for item, task in self.judging:
            if not task.done():
                still.append((item, task))
                continue
            e = task.exception()
            if e is not None:
                assert self.judge is not None
                self._say(f"agenteval monitor: the judge failed ({type(e).__name__}: {e})")
                why = f"judge error: {type(e).__name__}"
                item.judged = [self.judge.judge.inconclusive(why) for _ in item.made]
            out.append(item)
        self.judging = still
        return out

    def holding(self, ws: int) -> set[int]:
        """The windows a held conversation or a trial being judged will be written to."""
        out = {w for item, _ in self.judging for w in item.windows(ws)}
        if self.conversations is not None:
            now = time.time()
            for h in self.conversations.groups():
                at = h.start_ns / 1e9 if h.start_ns is not None else now
                out.add(window_start(at, ws))
        return out

    async def close(self) -> None:
        """Cancel the judging in flight (its traces stay in the log) and close the judge."""
        for _, task in self.judging:
            task.cancel()
        await asyncio.gather(*(t for _, t in self.judging), return_exceptions=True)
        self.judging.clear()
        if self.judge is not None:
            await self.judge.close()


def _trace_conversations(spans: list[SpanRecord]) -> tuple[list[str], int | None]:
    """The conversation ids of a trace's invocations (first seen first; none when none
    has one), and the trace's first start."""
    units = group_units(spans).units
    ids = list(dict.fromkeys(u.conversation for u in units if u.conversation is not None))
    starts = [u.start_ns for u in units if u.start_ns is not None]
    return ids, min(starts) if starts else None
