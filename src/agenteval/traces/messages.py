"""The prompt and the final answer of an agent invocation, read from its spans.

Messages are read in the shapes instrumentations record them and normalised to chat
messages ``{"role", "content"}`` with text content:

- OpenTelemetry GenAI (also PydanticAI): ``{"role", "parts": [{"type": "text",
  "content"}]}``; a text part without ``content`` is a **redacted** part;
- OpenAI chat: ``{"role", "content"}`` (a string or a list of ``{"type": "text",
  "text"}`` blocks);
- LangChain: ``{"type": "human" | "ai" | "system", "data": {"content"}}``, the
  serialised ``{"lc": 1, "kwargs": {...}}`` form, and ``["user", "text"]`` pairs;
- OpenInference flattened ``llm.input_messages.N.message.*`` attributes.

**Input** (first found): the root span's ``gen_ai.input.messages``, ``input.value``
(OpenInference; JSON with ``messages``, or plain text), ``gen_ai.prompt``; else the first
model span's input messages. **Output** (first found): the root span's
``gen_ai.output.messages``, ``final_result`` (PydanticAI), ``output.value``
(OpenInference; the last AI message when it holds ``messages``), ``gen_ai.completion``;
else the last model span's output messages when they hold text. A source that is there
but holds no text (redacted) reads as not recorded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agenteval.traces.attributes import json_value, openinference_messages
from agenteval.traces.records import SpanRecord

__all__ = ["MODEL_OPS", "chat_messages", "invocation_input", "invocation_output"]

MODEL_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _is_model(s: SpanRecord) -> bool:
    a = s.attributes
    return (
        a.get("gen_ai.operation.name") in MODEL_OPS
        or str(a.get("openinference.span.kind", "")).upper() == "LLM"
    )


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for b in content:
            if isinstance(b, str):
                texts.append(b)
            elif isinstance(b, Mapping) and b.get("type") == "text":
                t = b.get("text", b.get("content"))
                if isinstance(t, str):
                    texts.append(t)
        return "\n".join(texts) if texts else None
    return None


def _one(m: Any) -> dict[str, Any] | None:
    """One message as ``{"role", "content"}`` (content None when redacted or not text)."""
    if isinstance(m, list | tuple) and len(m) == 2 and isinstance(m[0], str):
        return {"role": _ROLES.get(m[0], m[0]), "content": _text(m[1])}
    if not isinstance(m, Mapping):
        return None
    if m.get("lc") == 1 and isinstance(m.get("kwargs"), Mapping):
        kind = str((m.get("id") or [""])[-1]).removesuffix("Message").removesuffix("Chunk")
        names = {"Human": "user", "AI": "assistant", "System": "system", "Tool": "tool"}
        return {"role": names.get(kind, kind.lower()), "content": _text(m["kwargs"].get("content"))}
    if "data" in m and isinstance(m.get("data"), Mapping) and isinstance(m.get("type"), str):
        return {
            "role": _ROLES.get(m["type"], m["type"]),
            "content": _text(m["data"].get("content")),
        }
    given = m.get("role") or m.get("type")
    if not isinstance(given, str):
        return None
    role = _ROLES.get(given, given)
    parts = m.get("parts")
    if isinstance(parts, list):
        texts = [
            p.get("content") for p in parts if isinstance(p, Mapping) and p.get("type") == "text"
        ]
        got = [t for t in texts if isinstance(t, str)]
        return {"role": role, "content": "\n".join(got) if got else None}
    return {"role": role, "content": _text(m.get("content"))}


def chat_messages(raw: Any) -> list[dict[str, Any]]:
    """Recorded messages (any shape of the module docstring) as chat messages."""
    raw = json_value(raw)
    if isinstance(raw, Mapping) and "messages" in raw:
        raw = raw["messages"]
    if not isinstance(raw, list):
        return []
    if len(raw) == 1 and isinstance(raw[0], list) and raw[0] and not isinstance(raw[0][0], str):
        raw = raw[0]  # LangChain's [[message, ...]] batch of one
    out = []
    for m in raw:
        one = _one(m)
        if one is not None:
            out.append(one)
    return out


def _model_spans(spans: Sequence[SpanRecord]) -> list[SpanRecord]:
    models = [s for s in spans if _is_model(s)]
    models.sort(key=lambda s: (s.start_ns is None, s.start_ns or 0))
    return models


def _side(s: SpanRecord, side: str) -> list[dict[str, Any]]:
    a = s.attributes
    if f"gen_ai.{side}.messages" in a:
        return chat_messages(a[f"gen_ai.{side}.messages"])
    return chat_messages(openinference_messages(a, f"llm.{side}_messages."))


def _prompt(msgs: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The messages up to the last user message, when that one holds text."""
    last = max((i for i, m in enumerate(msgs) if m["role"] == "user"), default=None)
    if last is None or not msgs[last]["content"]:
        return None
    kept = [m for m in msgs[: last + 1] if isinstance(m["content"], str) and m["content"]]
    return [{"role": m["role"], "content": m["content"]} for m in kept]


def invocation_input(root: SpanRecord, spans: Sequence[SpanRecord]) -> list[dict[str, Any]] | None:
    """The prompt of one invocation as chat messages ending with the user's message, or
    None when it was not recorded (module docstring for where it is read)."""
    a = root.attributes
    for key in ("gen_ai.input.messages", "input.value", "gen_ai.prompt"):
        if key not in a:
            continue
        value = json_value(a[key])
        if isinstance(value, str):
            return [{"role": "user", "content": value}] if value else None
        msgs = _prompt(chat_messages(value))
        if msgs:
            return msgs
    for s in _model_spans(spans):
        msgs = _prompt(_side(s, "input"))
        if msgs:
            return msgs
        break  # the first model call holds the prompt, redacted or not
    return None


def _final_text(msgs: list[dict[str, Any]]) -> str | None:
    for m in reversed(msgs):
        if m["role"] == "assistant" and isinstance(m["content"], str) and m["content"]:
            return str(m["content"])
    return None


def invocation_output(root: SpanRecord, spans: Sequence[SpanRecord]) -> str | None:
    """The final answer of one invocation, or None when it was not recorded."""
    a = root.attributes
    if "gen_ai.output.messages" in a:
        text = _final_text(chat_messages(a["gen_ai.output.messages"]))
        if text is not None:
            return text
    for key in ("final_result", "output.value", "gen_ai.completion"):
        if key not in a:
            continue
        value = json_value(a[key])
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping) and "messages" in value:
            text = _final_text(chat_messages(value))
            if text is not None:
                return text
            continue
        if value is not None:
            return json.dumps(value, ensure_ascii=False)
    models = _model_spans(spans)
    if models:
        return _final_text(_side(models[-1], "output"))
    return None
