"""Which source a trial's tool calls come from, and how captured data joins the trial.

Precedence for ``tool_calls`` (the first that applies wins, never a mix):

1. ``agent``: the agent returned ``tool_calls`` (even an empty list);
2. ``transcript``: it returned ``messages`` holding tool calls
   (:func:`agenteval.trials.transcripts.calls_from_messages`);
3. the capture source's name (``otel``, ``openai-agents``, ``proxy``): calls seen by
   capture while the trial ran (with several sources, the first that saw calls; the
   recording proxy comes after span capture).

When agenteval derived the calls (2 or 3), the source is recorded as
``metadata["trajectory_source"]`` (``transcript``, ``otel``, ``openai-agents``, ``proxy``), unless
the agent set that key itself; a trial whose calls the agent returned, or that has none,
has no such key.

Captured data also fills what the agent did not give: token ``usage`` (only when the
agent returned none, so tokens are never counted twice), the tool definitions offered
(``tools``), active time (time inside model calls), and ``metadata["token_details"]``:
cache and reasoning token counts per model, when the spans have them, and the source's
own ``Trajectory.metadata`` keys (the recording proxy's ``model_calls``; the spans'
``not_recorded`` and ``not_recorded_reason`` when the trial's calls are the capture's).

When agenteval derived the calls, ``metadata["tool_errors"]`` says which rule made each
failed call an error (:mod:`agenteval.trials.tool_errors`: ``exception``, ``status``,
``flag`` or ``text``), when any did.

When the agent raises (or times out), :func:`keep_partial` puts what capture saw so far
on the failed trial: its calls, usage and active time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agenteval.agents.base import AgentOutput, Recorder
from agenteval.traces.mapping import Trajectory
from agenteval.trials.tool_errors import TOOL_ERRORS, tool_error_list
from agenteval.trials.transcripts import calls_from_messages
from agenteval.trials.unrecorded import NOT_RECORDED, NOT_RECORDED_REASON

__all__ = ["Seen", "keep_partial", "merge", "watch"]


@dataclass(slots=True)
class Seen:
    """What a capture source saw during one agent call (set when the call returned)."""

    source: str = ""
    trajectory: Trajectory | None = None


@contextmanager
def watch(source: Any, rec: Recorder) -> Iterator[Seen]:
    """Run the block under ``source`` (a CaptureSource, or None for no capture).

    On a normal exit the yielded :class:`Seen` holds the trajectory; when the block raises
    (a crash, a timeout's cancellation) what was seen goes into ``rec`` and the exception
    propagates unchanged.
    """
    seen = Seen()
    if source is None:
        yield seen
        return
    with source.trial() as t:
        try:
            yield seen
        except BaseException:
            keep_partial(t.trajectory(), rec, getattr(t, "source", source.name))
            rec.cached.extend(t.cached() if hasattr(t, "cached") else ())  # the replay cache
            raise
        rec.cached.extend(t.cached() if hasattr(t, "cached") else ())  # the replay cache
        seen.source = getattr(t, "source", source.name)
        seen.trajectory = t.trajectory()


def keep_partial(t: Trajectory, rec: Recorder, source: str) -> None:
    """Record on ``rec`` what was seen before the agent failed (the calls say where they
    came from: ``metadata.trajectory_source``, as on an answered trial)."""
    if NOT_RECORDED in t.metadata and not rec.tool_calls:
        rec.metadata[NOT_RECORDED] = t.metadata[NOT_RECORDED]
        rec.metadata[NOT_RECORDED_REASON] = t.metadata.get(NOT_RECORDED_REASON)
    if t.tool_calls and not rec.tool_calls:
        rec.tool_calls = list(t.tool_calls)
        rec.metadata["trajectory_source"] = source
        rules = tool_error_list(rec.tool_calls)
        if rules:
            rec.metadata[TOOL_ERRORS] = rules
    if not rec.usage:
        for u in t.usage:
            rec.add_usage(u.model, u.input_tokens, u.output_tokens)
    if not rec.active_s and t.active_s:
        rec.active_s = t.active_s


def merge(out: AgentOutput, seen: Seen | None, rec: Recorder) -> AgentOutput:
    """Complete ``out`` with the transcript's and the capture's calls (module rules).

    ``rec.usage`` already holds the usage the agent returned (if any).
    """
    source = ""
    if out.tool_calls is None and out.messages:
        calls = calls_from_messages(out.messages)
        if calls:
            out.tool_calls, source = calls, "transcript"
    t = seen.trajectory if seen is not None else None
    if t is not None and seen is not None:
        if out.tool_calls is None and t.tool_calls:
            out.tool_calls, source = list(t.tool_calls), seen.source
        if not rec.usage:
            for u in t.usage:
                rec.add_usage(u.model, u.input_tokens, u.output_tokens)
        if out.tools is None and t.tools:
            out.tools = t.tools
        if not rec.active_s and t.active_s:
            rec.active_s = t.active_s
    extra: dict[str, Any] = {}
    if source:
        extra["trajectory_source"] = source
        rules = tool_error_list(out.tool_calls or [])
        if rules:
            extra[TOOL_ERRORS] = rules
    if t is not None and t.token_details:
        extra["token_details"] = t.token_details
    if t is not None and t.metadata:
        extra.update(t.metadata)  # e.g. the proxy's ``model_calls``
        if seen is not None and source != seen.source:  # the calls are not the capture's
            extra.pop(NOT_RECORDED, None)
            extra.pop(NOT_RECORDED_REASON, None)
    if extra:
        out.metadata = {**extra, **out.metadata}
    return out
