"""GenAI content recorded as events: span events, and OTel log records joined to spans.

Two generations of the OpenTelemetry GenAI conventions put message content in events
rather than span attributes (log records joined to their span by id arrive here as
events too, their body in :attr:`~agenteval.traces.records.SpanEvent.body`):

- **per-message events** (semconv ≤ 1.36; ``opentelemetry-instrumentation-openai-v2``'s
  default mode): ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message`` (``content``, ``tool_calls``) and ``gen_ai.tool.message``
  (``content``, ``id``: the call answered) are the request's messages, in order;
  ``gen_ai.choice`` (``message``: ``content``, ``tool_calls``; ``finish_reason``) is the
  response. The fields are in the body (a log record) or the attributes (a span event;
  JSON text is parsed). A tool call's ``function.arguments`` are absent when content
  capture is off;
- **one details event** (semconv ≥ 1.37): ``gen_ai.client.inference.operation.details``
  whose attributes hold ``gen_ai.input.messages``, ``gen_ai.output.messages``,
  ``gen_ai.system_instructions`` and ``gen_ai.tool.definitions`` (also the usage), as on
  a span;
- the oldest form: ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events with
  a ``gen_ai.prompt`` / ``gen_ai.completion`` attribute (JSON chat messages).

:func:`from_events` returns the attributes a span lacks that its events hold:
``gen_ai.input.messages`` and ``gen_ai.output.messages`` (as chat messages), the details
event's attributes, and ``gen_ai.operation.name = chat`` for a span that has per-message
events but no operation name (a model call recorded by events only). On an
``execute_tool`` span the message events give the call instead: the tool message's
``content`` is ``gen_ai.tool.call.result``, the assistant's call with the span's
``gen_ai.tool.call.id`` (or tool name) gives ``gen_ai.tool.call.arguments``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.traces.attributes import json_value
from agenteval.traces.records import SpanRecord

__all__ = ["DETAILS", "MESSAGE_EVENTS", "from_events"]

DETAILS = "gen_ai.client.inference.operation.details"
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_DETAIL_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.operation.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
)


def _fields(body: Any, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The event's fields: its body when it is an object, else its attributes."""
    got = json_value(body)
    if isinstance(got, Mapping):
        return dict(got)
    return {k: v if k == "content" else json_value(v) for k, v in attrs.items()}


def _message(role: str, f: Mapping[str, Any]) -> dict[str, Any]:
    m: dict[str, Any] = {"role": f.get("role") if isinstance(f.get("role"), str) else role}
    if "content" in f:
        m["content"] = f["content"]
    calls = json_value(f.get("tool_calls"))
    if isinstance(calls, list):
        m["tool_calls"] = [json_value(c) for c in calls]
    if role == "tool" and f.get("id") is not None:
        m["tool_call_id"] = f["id"]
    return m


def _tool_fields(a: Mapping[str, Any], msgs: list[dict[str, Any]]) -> dict[str, Any]:
    """A tool span's arguments and result from its message events: the tool message's
    content, the call (of this span's id or name) in an assistant message."""
    out: dict[str, Any] = {}
    cid, name = a.get("gen_ai.tool.call.id"), a.get("gen_ai.tool.name")
    for m in msgs:
        if m["role"] == "tool" and "content" in m and "gen_ai.tool.call.result" not in a:
            out.setdefault("gen_ai.tool.call.result", m["content"])
        for c in m.get("tool_calls") or ():
            fn = c.get("function") if isinstance(c, Mapping) else None
            if not isinstance(fn, Mapping) or "arguments" not in fn:
                continue
            mine = c.get("id") == cid or (cid is None and fn.get("name") == name)
            if mine and "gen_ai.tool.call.arguments" not in a:
                out.setdefault("gen_ai.tool.call.arguments", fn["arguments"])
    return out


def from_events(s: SpanRecord) -> dict[str, Any]:
    """The attributes ``s`` lacks that its events hold (module docstring)."""
    a = s.attributes
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    for e in s.events:
        role = MESSAGE_EVENTS.get(e.name)
        if role is not None:
            inputs.append(_message(role, _fields(e.body, e.attributes)))
        elif e.name == "gen_ai.choice":
            f = _fields(e.body, e.attributes)
            msg = json_value(f.get("message"))
            outputs.append(_message("assistant", msg if isinstance(msg, Mapping) else f))
        elif e.name == DETAILS:
            for k in _DETAIL_KEYS:
                if k in e.attributes and k not in a and k not in extra:
                    extra[k] = json_value(e.attributes[k])
        elif e.name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            key = "gen_ai.prompt" if e.name.endswith("prompt") else "gen_ai.completion"
            got = json_value(e.attributes.get(key))
            if isinstance(got, list):
                (inputs if key == "gen_ai.prompt" else outputs).extend(
                    m for m in got if isinstance(m, dict)
                )
    if a.get("gen_ai.operation.name") == "execute_tool":
        return {**extra, **_tool_fields(a, inputs + outputs)}
    if inputs and "gen_ai.input.messages" not in a:
        extra.setdefault("gen_ai.input.messages", inputs)
    if outputs and "gen_ai.output.messages" not in a:
        extra.setdefault("gen_ai.output.messages", outputs)
    if (inputs or outputs) and "gen_ai.operation.name" not in a:
        extra.setdefault("gen_ai.operation.name", "chat")
    return extra
