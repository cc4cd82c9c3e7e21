"""Any agent adapter, with the spans its service exports to the run's OTLP receiver.

:class:`ReceiverAgent` wraps the adapter (``--http-config``, ``--endpoint``, the tool
loop): per trial it makes a fresh :class:`~agenteval.llm.propagation.TraceContext`,
which the adapter's HTTP requests carry as ``traceparent``, and asks the
:class:`~agenteval.traces.receiver.OtlpReceiver` for that trace's spans. When the trial
has ended, the runner calls :meth:`ReceiverAgent.settle` — outside the trial's timeout
and its measured latency — which waits for late spans (at most ``wait_s``, see
:meth:`~agenteval.traces.receiver.TraceBox.settle`), maps them with
:func:`~agenteval.traces.mapping.trajectory_from_spans` and joins them to the trial
through :func:`~agenteval.traces.merge.merge` under the source name ``otlp``.

Precedence: tool calls the adapter read from the response (``response.tool_calls`` of an
HTTP config, tool calls in an OpenAI-compatible response) win when there are any; when it
found none, the calls from the spans are the trial's, and ``metadata.trajectory_source``
is ``otlp``. Usage from spans is used only when the response reported none. The trial's
``metadata.otlp_spans`` counts the spans attributed to it.

A trial that failed (HTTP error, timeout, crash) waits for late spans like an answered
one (bounded by ``wait_s``: the failing tool's span may still be in the exporter's
batch), and keeps what arrived (:func:`~agenteval.traces.merge.keep_partial`).

**Model time.** When model spans arrived, ``latency.active_s`` is the time inside them
(their union), replacing the adapter's whole-request time. Log records sent to
``/v1/logs`` join their spans (:mod:`agenteval.traces.receiver_logs`).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from agenteval.agents.base import Agent, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.llm.propagation import TraceContext
from agenteval.traces.logs import attach
from agenteval.traces.mapping import Trajectory, trajectory_from_spans
from agenteval.traces.merge import Seen, keep_partial, merge
from agenteval.traces.receiver import OtlpReceiver, TraceBox
from agenteval.traces.records import SpanRecord

__all__ = ["DEFAULT_WAIT_S", "ReceiverAgent"]

DEFAULT_WAIT_S = 2.0
"""``--otlp-wait``: the longest wait for late spans after an answer, in seconds."""
SOURCE = "otlp"


class ReceiverAgent:
    """``inner`` with per-trial trace contexts and the receiver's spans (module docstring)."""

    def __init__(self, inner: Agent, receiver: OtlpReceiver, wait_s: float = DEFAULT_WAIT_S):
        self.inner = inner
        self.receiver = receiver
        self.wait_s = wait_s
        self._boxes: dict[str, TraceBox] = {}  # trace id → its trial's spans

    def describe(self) -> dict[str, Any]:
        """The inner agent's description (the receiver is a run setting, not the agent)."""
        return self.inner.describe()

    async def start(self) -> None:
        """Start serving, then the inner agent."""
        await self.receiver.start()
        await self.inner.start()

    async def close(self) -> None:
        """Close the inner agent, then the receiver."""
        try:
            await self.inner.close()
        finally:
            await self.receiver.close()

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Open the trial's trace, then run the inner agent (its requests carry it)."""
        ctx = rec.trace = rec.trace or TraceContext.new()  # a conversation's turns share it
        box = self._boxes.get(ctx.trace_id)
        if box is None:
            self._boxes[ctx.trace_id] = self.receiver.expect(ctx)
        else:  # a conversation's next turn: the wait is for its spans too
            box.another_request()
        return await self.inner.run(case, repeat, rec)

    async def settle(self, rec: Recorder, out: AgentOutput | None) -> AgentOutput | None:
        """After the trial: wait for late spans (failed trials too) and merge them."""
        box = self._boxes.pop(rec.trace.trace_id, None) if rec.trace is not None else None
        if box is None:
            return out
        try:
            try:  # a failed trial waits too: its failing tool's span may be in a batch
                await box.settle(self.wait_s)
            except asyncio.CancelledError:  # Ctrl-C twice: keep what has arrived
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
        finally:
            self.receiver.release(box.context)
        spans = attach(box.spans, box.logs) if box.logs else box.spans
        traj = trajectory_from_spans(spans)
        if traj.active_s is not None:  # time inside model spans, not the whole request
            rec.active_s = traj.active_s
        meta = out.metadata if out is not None else rec.metadata
        bounds = _turn_calls(box, spans, traj, meta.get("conversation"))
        if out is None:
            keep_partial(traj, rec, SOURCE)
            _set_turn_calls(rec.metadata, bounds)
            return None
        if out.tool_calls == []:  # the response listed none: the spans may have them
            out.tool_calls = None
        out = merge(out, Seen(SOURCE, traj), rec)
        out.metadata = {**out.metadata, "otlp_spans": len(box.spans)}
        _set_turn_calls(out.metadata, bounds)
        return out


def _turn_calls(
    box: TraceBox, spans: list[SpanRecord], traj: Trajectory, conversation: Any
) -> list[int] | None:
    """A conversation's calls from spans, turn by turn: each turn's request is one root
    span of the trace (its parent the trial's span), in start order. ``traj.tool_calls``
    is put in turn order; the result is the turns' bounds in it (turn ``i`` made
    ``calls[b[i]:b[i+1]]``). None when the roots are not one per turn."""
    turns = conversation.get("turns") if isinstance(conversation, dict) else None
    if not isinstance(turns, list) or not turns:
        return None
    by_id = {s.span_id: s for s in spans}
    groups: dict[str, list[SpanRecord]] = {}
    roots: dict[str, SpanRecord] = {}
    for s in spans:
        top, hops = s, 0
        while top.parent_id in by_id and top.parent_id != box.context.span_id:
            top, hops = by_id[top.parent_id], hops + 1
            if hops > len(by_id):  # parent ids in a cycle
                return None
        groups.setdefault(top.span_id, []).append(s)
        roots[top.span_id] = top
    if len(roots) != len(turns):
        return None
    order = sorted(roots.values(), key=lambda r: (r.start_ns is None, r.start_ns or 0))
    per = [trajectory_from_spans(groups[r.span_id]).tool_calls for r in order]
    if sum(len(p) for p in per) != len(traj.tool_calls):
        return None
    traj.tool_calls = [c for p in per for c in p]
    return list(itertools.accumulate((len(p) for p in per), initial=0))


def _set_turn_calls(meta: dict[str, Any], bounds: list[int] | None) -> None:
    """Each turn's ``calls`` from ``bounds``, when the trial's calls are the spans'."""
    if bounds is None or meta.get("trajectory_source") != SOURCE:
        return
    conv = meta["conversation"]
    turns = [
        {**t, "calls": [bounds[i], bounds[i + 1]]} if isinstance(t, dict) else t
        for i, t in enumerate(conv["turns"])
    ]
    meta["conversation"] = {**conv, "turns": turns}
