"""Spans → a trajectory: tool calls, token usage, tool definitions and model time.

Pure: it takes plain :class:`SpanRecord` values (what any tracing backend or OTLP file
holds), never SDK objects, so the same mapping serves in-process capture and imported
traces. Spans are first read into the names below whatever convention recorded them
(span events, log records, OpenLLMetry's flattened attributes, Google ADK's,
OpenInference's wrapped tool inputs: :mod:`agenteval.traces.conventions`). Each span is
classified once:

- **tool**: ``gen_ai.operation.name = execute_tool``, ``openinference.span.kind = TOOL``,
  ``langsmith.span.kind = tool`` or ``traceloop.span.kind = tool``; also an OpenInference
  ``AGENT`` span with a ``tool.name`` (OpenInference's LangChain instrumentation calls any
  run whose name holds "agent" AGENT, tools included);
- **retriever**: ``openinference.span.kind = RETRIEVER`` or ``langsmith.span.kind =
  retriever``;
- **model**: ``gen_ai.operation.name`` one of ``chat``, ``text_completion``,
  ``generate_content``, ``completion``; ``openinference.span.kind = LLM`` (or ``AGENT``
  with ``llm.invocation_parameters``, as above); ``langsmith.span.kind = llm``;
- anything else (agent, chain, HTTP... spans) is ignored.

A **tool span** becomes one call, in span start order:

- name: ``gen_ai.tool.name``, ``tool.name``, else the span name (less an
  ``execute_tool `` prefix); id: ``gen_ai.tool.call.id`` or ``tool_call.id``, else the
  ``tool_call_id`` of a LangChain ``ToolMessage`` result (below), else the id of the
  model's call it is paired with;
- arguments: ``gen_ai.tool.call.arguments``, ``tool_arguments`` (PydanticAI's version-2
  format), ``input.value`` (OpenInference), ``gen_ai.prompt`` (LangSmith),
  ``traceloop.entity.input``, else an event attribute of those names. When there are none,
  or they are not a JSON object (OpenInference records a LangChain tool's only string
  argument as that bare string), they are the arguments of the model's call the span is
  paired with: the ``tool_call`` part with the same id in a model span's
  ``gen_ai.output.messages`` (or OpenInference ``llm.output_messages``), else — a span
  with no id — the earliest not yet paired call of the same name. ``tool.parameters`` is
  the tool's schema, never the call's arguments;
- result: ``gen_ai.tool.call.result``, ``tool_response``, ``output.value``,
  ``gen_ai.completion``, ``traceloop.entity.output``, else an event, else the
  ``tool_call_response`` of the paired call in a later model span's input messages. A
  LangChain ``ToolMessage`` (OpenInference's ``output.value`` of a LangChain tool, any of
  its serialised shapes) stands for its ``content``; with ``status: "error"`` that content
  is the call's error;
- a span with status ERROR or an ``exception`` event is an **error**, not a result:
  ``error`` is ``"<exception type>: <message>"`` (the last exception event), else the
  status description, else ``"error"``; ``result`` stays None. So is a result shaped
  like an error (``"Error: RuntimeError: ..."``: what a framework that caught the
  exception sends the model), by the rule every path shares
  (:mod:`agenteval.trials.tool_errors`);
- a span that has not ended is a call with error ``"unfinished: ..."``;
- ``started_at`` and ``duration_s`` come from the span's times.

Attribute values holding JSON text are parsed; other text is kept as text. So a tool
span's result ``"30"`` is the number 30 (the tool's value, serialised), while a message
path (a transcript, the proxy, a model span's ``tool_call_response``) keeps the text the
model was sent, ``"30"``: a bare JSON literal is the one result the two kinds of path
read differently, by design.

When the spans hold **no tool span at all** (only model spans are instrumented), the calls
are read from the model spans' messages instead: every ``tool_call`` part of an output
message, in order, paired by id with ``tool_call_response`` parts of later inputs.

A **retriever span** becomes a call named after the span, with arguments ``{"query":
input.value}`` and result the list of documents, each with the fields recorded
(``retrieval.documents.N.document.*``: ``id``, ``content``, ``score``, ``metadata``), so
``retrieval_recall`` sees the document ids —
unless it runs inside a tool span (a retriever wrapped as a tool): that tool's call
already stands for it.

A **model span** adds tokens to its model (``gen_ai.response.model``, else
``gen_ai.request.model``, else ``llm.model_name``): ``gen_ai.usage.input_tokens`` /
``output_tokens`` (or the older ``prompt_tokens`` / ``completion_tokens``, or
OpenInference ``llm.token_count.prompt`` / ``completion``). Other ``gen_ai.usage.*`` and
``llm.token_count.*_details.*`` counts (cache reads, reasoning...) go to
``token_details``. Its ``gen_ai.tool.definitions`` (or ``llm.tools.N.tool.json_schema``)
are the tools offered (first definition of a name wins). **Active time** is the union of
the model spans' intervals.

**Not recorded.** When calls lack content the spans did not record (content capture
off), ``Trajectory.metadata`` says so: ``not_recorded`` (``tool_calls``,
``tool_arguments``, ``tool_results``: :func:`unrecorded_tool_content`) and
``not_recorded_reason`` (the setting that records it,
:func:`~agenteval.traces.conventions.content.content_setting`), so the scorers that need
it are not applicable rather than wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agenteval.traces.attributes import (
    first,
    from_events,
    json_value,
    openinference_messages,
    tool_message,
)
from agenteval.traces.conventions import normalise
from agenteval.traces.conventions.content import content_setting, unrecorded_model_content
from agenteval.traces.model_spans import add_usage, tool_definitions, union_s
from agenteval.traces.records import SpanEvent, SpanRecord, Trajectory
from agenteval.traces.retrieval import UNFINISHED, inside_tool, retrieval_call, span_error, when
from agenteval.trials.tool_errors import mark, output_error, rule_of
from agenteval.trials.transcripts import calls_from_messages
from agenteval.trials.trial import ToolCall
from agenteval.trials.unrecorded import NOT_RECORDED, NOT_RECORDED_REASON

__all__ = [
    "SpanEvent",
    "SpanRecord",
    "Trajectory",
    "tool_definitions",
    "trajectory_from_spans",
    "unrecorded_tool_content",
]

_MODEL_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_ARG_KEYS = (
    "gen_ai.tool.call.arguments",
    "tool_arguments",
    "input.value",
    "gen_ai.prompt",
    "traceloop.entity.input",
)
_RESULT_KEYS = (
    "gen_ai.tool.call.result",
    "tool_response",
    "output.value",
    "gen_ai.completion",
    "traceloop.entity.output",
)


def _kind(s: SpanRecord) -> str:
    a = s.attributes
    op = a.get("gen_ai.operation.name")
    oi = str(a.get("openinference.span.kind", "")).upper()
    ls = str(a.get("langsmith.span.kind") or a.get("traceloop.span.kind") or "").lower()
    if op == "execute_tool" or oi == "TOOL" or ls == "tool":
        return "tool"
    if oi == "AGENT" and "tool.name" in a:  # OpenInference names any run "agent" AGENT
        return "tool"
    if oi == "AGENT" and "llm.invocation_parameters" in a:
        return "model"
    if oi == "RETRIEVER" or ls == "retriever":
        return "retriever"
    if op in _MODEL_OPS or oi == "LLM" or ls == "llm":
        return "model"
    return ""


def _tool_name(s: SpanRecord) -> str:
    a = s.attributes
    for k in ("gen_ai.tool.name", "tool.name", "langsmith.trace.name", "traceloop.entity.name"):
        v = a.get(k)
        if isinstance(v, str) and v:
            return v
    return s.name.removeprefix("execute_tool ").strip() or s.name


def _message_calls(models: list[SpanRecord], results: bool = True) -> list[ToolCall]:
    """Calls requested in output messages, results from (later) input messages (read only
    when ``results``)."""
    msgs: list[Any] = []
    for s in models:
        if results:
            msgs.extend(_messages(s, "input"))
        msgs.extend(_messages(s, "output"))
    return calls_from_messages(msgs)


def _messages(s: SpanRecord, side: str) -> list[Any]:
    a = s.attributes
    raw = json_value(a.get(f"gen_ai.{side}.messages"))
    if isinstance(raw, list):
        return raw
    return openinference_messages(a, f"llm.{side}_messages.")


@dataclass(frozen=True, slots=True)
class _Own:
    """What a tool span says about its call by itself."""

    id: str | None
    has_args: bool
    args: Any
    has_result: bool
    result: Any
    error: str | None
    rule: tuple[str, str | None] | None = None

    @property
    def complete(self) -> bool:
        """An id, object arguments, and a result or an error: no model message is needed."""
        done = self.has_result or self.error is not None
        return self.id is not None and self.has_args and isinstance(self.args, dict) and done


def _result_value(v: Any) -> Any:
    """A tool result from a span attribute: JSON text is the tool's value serialised (the
    GenAI conventions' ``gen_ai.tool.call.result``, PydanticAI's ``tool_response``, what
    ``export-otel`` writes), so it is parsed: ``"30"`` is 30, ``'{"a": 1}'`` an object.
    Text holding ``NaN``, ``Infinity`` or a number too large for a float stays the text
    (``[NaN, 1e999]``, Python's ``json.dumps`` of floats JSON cannot hold): parsed, it
    would be written ``[null, null]``."""
    got = json_value(v)
    return v if isinstance(v, str) and got is not v and not _finite(got) else got


def _finite(value: Any) -> bool:
    """Whether no float in ``value`` (a parsed JSON value, walked without recursion) is
    NaN or infinite."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, float) and not math.isfinite(x):
            return False
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return True


def _own(s: SpanRecord) -> _Own:
    a = s.attributes
    cid = a.get("gen_ai.tool.call.id") or a.get("tool_call.id")
    has_args, args = first(a, _ARG_KEYS)
    if not has_args:
        has_args, args = from_events(s, _ARG_KEYS)
    failed = span_error(s) if s.end_ns is not None else (UNFINISHED, "")
    error: str | None = None
    rule: tuple[str, str | None] | None = None
    if failed is not None:
        error, rule = failed[0], ((failed[1], None) if failed[1] else None)
    has_result, result = first(a, _RESULT_KEYS)
    if not has_result:
        has_result, result = from_events(s, _RESULT_KEYS)
    result = _result_value(result)
    msg = tool_message(result) if has_result else None
    flagged = False
    if msg is not None:
        cid = cid or msg.get("tool_call_id")
        result = _result_value(msg["content"])
        flagged = msg.get("status") == "error"
    if error is None and has_result:
        rule = output_error(result, flagged)
        if rule is not None:
            error = result if isinstance(result, str) else json.dumps(result, default=str)
    if error is not None:
        has_result, result = False, None
    return _Own(
        id=str(cid) if cid else None,
        has_args=has_args,
        args=json_value(args) if has_args else None,
        has_result=has_result,
        result=result,
        error=error,
        rule=rule,
    )


def _pair(owns: list[_Own], names: list[str], calls: list[ToolCall]) -> list[ToolCall | None]:
    """The model-message call each tool span stands for: the one with its id, else (a span
    without an id) the earliest not yet paired call of the same name."""
    index = {c.id: i for i, c in enumerate(calls) if c.id}
    out: list[int | None] = [index.get(o.id) if o.id else None for o in owns]
    taken = {i for i in out if i is not None}
    for k, o in enumerate(owns):
        if o.id is None:
            i = next(
                (i for i, c in enumerate(calls) if i not in taken and c.name == names[k]), None
            )
            if i is not None:
                out[k] = i
                taken.add(i)
    return [None if i is None else calls[i] for i in out]


def _tool_call(s: SpanRecord, o: _Own, seen: ToolCall | None) -> ToolCall:
    has_args, args = o.has_args, o.args
    if seen is not None and not isinstance(args, dict):
        has_args, args = True, seen.arguments
    result, error, rule = o.result, o.error, o.rule
    if not o.has_result and error is None and seen is not None:
        result, error, rule = seen.result, seen.error, rule_of(seen)
    dur = None
    if s.start_ns is not None and s.end_ns is not None:
        dur = max(0.0, (s.end_ns - s.start_ns) / 1e9)
    call = ToolCall(
        id=o.id or (seen.id if seen is not None else None),
        name=_tool_name(s),
        arguments=json_value(args) if has_args else {},
        result=_result_value(result),
        error=error,
        started_at=when(s.start_ns),
        duration_s=dur,
    )
    return call if rule is None else mark(call, *rule)


def trajectory_from_spans(spans: Iterable[SpanRecord]) -> Trajectory:
    """Map one trial's spans to a :class:`Trajectory` (rules in the module docstring)."""
    ordered = sorted(
        enumerate(normalise(spans)), key=lambda p: (p[1].start_ns is None, p[1].start_ns or 0, p[0])
    )
    t = Trajectory()
    tools: list[SpanRecord] = []
    retrievers: list[SpanRecord] = []
    models: list[SpanRecord] = []
    kinds = {s.span_id: _kind(s) for _, s in ordered}
    parents = {s.span_id: s.parent_id for _, s in ordered}
    for _, s in ordered:
        kind = kinds[s.span_id]
        if kind == "retriever" and inside_tool(s, kinds, parents):
            continue
        if kind == "tool":
            tools.append(s)
        elif kind == "retriever":
            retrievers.append(s)
        elif kind == "model":
            models.append(s)
    owns = [_own(s) for s in tools]
    # The model spans' messages are read only when some tool span lacks its content.
    need = not tools or any(not o.complete for o in owns)
    results = not tools or any(not o.has_result and o.error is None for o in owns)
    from_messages = _message_calls(models, results) if models and need else []
    calls: list[tuple[int, ToolCall]] = []
    if tools:
        seen = _pair(owns, [_tool_name(s) for s in tools], from_messages)
        trio = zip(tools, owns, seen, strict=True)
        calls = [(s.start_ns or 0, _tool_call(s, o, c)) for s, o, c in trio]
        gaps = _tool_gaps(owns, seen) if need else []
    else:
        calls = [(0, c) for c in from_messages]
        gaps = unrecorded_model_content(models, 0)
    if gaps:
        t.metadata[NOT_RECORDED] = gaps
        t.metadata[NOT_RECORDED_REASON] = content_setting([*tools, *models])
    calls.extend((s.start_ns or 0, retrieval_call(s)) for s in retrievers)
    if retrievers:
        calls.sort(key=lambda p: p[0])
    t.tool_calls = [c for _, c in calls]
    defs: dict[str, dict[str, Any]] = {}
    intervals = []
    for s in models:
        add_usage(t, s)
        for d in tool_definitions(s.attributes):
            defs.setdefault(d["name"], d)
        if s.start_ns is not None and s.end_ns is not None and s.end_ns >= s.start_ns:
            intervals.append((s.start_ns, s.end_ns))
    if defs:
        t.tools = list(defs.values())
    if intervals:
        t.active_s = union_s(intervals)
    return t


def _tool_gaps(owns: list[_Own], seen: list[ToolCall | None]) -> list[str]:
    no_args = no_result = False
    for o, c in zip(owns, seen, strict=True):
        if not o.has_args:
            no_args = no_args or c is None or _empty_parsed(c.arguments)
        if o.error is None and not o.has_result:
            no_result = no_result or c is None or c.result is None
    return [n for n, b in (("tool_arguments", no_args), ("tool_results", no_result)) if b]


def unrecorded_tool_content(spans: Iterable[SpanRecord]) -> list[str]:
    """What the spans did not record about the tool calls: ``tool_arguments`` when a tool
    span has no arguments (on the span, its events, or a model message's call with the
    same id), ``tool_results`` when a finished tool span that did not fail has no result
    (likewise); with no tool span, what the model spans' messages lack
    (:func:`~agenteval.traces.conventions.content.unrecorded_model_content`, which adds
    ``tool_calls`` when model calls hold no message at all). Empty when every call is
    complete."""
    spans = normalise(spans)
    tools = [s for s in spans if _kind(s) == "tool"]
    models = [s for s in spans if _kind(s) == "model"]
    if not tools:
        return unrecorded_model_content(models, 0)
    models.sort(key=lambda s: (s.start_ns is None, s.start_ns or 0))
    owns = [_own(s) for s in tools]
    seen = _pair(owns, [_tool_name(s) for s in tools], _message_calls(models))
    return _tool_gaps(owns, seen)


def _empty_parsed(args: Any) -> bool:
    return args is None or args == {}
