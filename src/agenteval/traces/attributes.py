"""Reading span attribute values: JSON text, fallbacks to events, OpenInference's
flattened message lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.traces.jsontext import loads
from agenteval.traces.records import SpanRecord
from agenteval.trials.transcripts import unwrap_message


def json_value(v: Any) -> Any:
    """A JSON text parsed; anything else (or text that is not JSON) as is."""
    if isinstance(v, str):
        t = v.strip()
        if t[:1] in ("{", "[", '"') or t in ("true", "false", "null") or _numberish(t):
            try:
                return loads(t)
            except (ValueError, RecursionError):  # too deeply nested: kept as the text
                return v
    if isinstance(v, tuple):
        return list(v)
    return v


def _numberish(t: str) -> bool:
    return bool(t) and (t[0].isdigit() or (t[0] == "-" and t[1:2].isdigit()))


def first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    """(True, value) of the first of ``keys`` present in ``attrs``, else (False, None)."""
    for k in keys:
        if k in attrs:
            return True, attrs[k]
    return False, None


def from_events(s: SpanRecord, keys: tuple[str, ...]) -> tuple[bool, Any]:
    """Like :func:`first`, over the attributes of the span's events in order."""
    for e in s.events:
        found, v = first(e.attributes, keys)
        if found:
            return True, v
    return False, None


def openinference_messages(a: Mapping[str, Any], prefix: str) -> list[Any]:
    """``llm.output_messages.N.message.*`` flattened attributes back into OpenAI messages
    (``message.contents.M.message_content.text`` parts joined with newlines as the
    content)."""
    out: dict[int, dict[str, Any]] = {}
    for k, v in a.items():
        if not k.startswith(prefix):
            continue
        parts = k[len(prefix) :].split(".")
        if len(parts) < 3 or not parts[0].isdigit() or parts[1] != "message":
            continue
        msg = out.setdefault(int(parts[0]), {})
        rest = parts[2:]
        if rest[0] in ("role", "content", "tool_call_id", "name") and len(rest) == 1:
            msg[rest[0]] = v
        elif rest[0] == "contents" and len(rest) == 4 and rest[1].isdigit():
            if rest[2:] == ["message_content", "text"] and isinstance(v, str):
                msg.setdefault("_texts", {})[int(rest[1])] = v
        elif rest[0] == "tool_calls" and len(rest) >= 4 and rest[1].isdigit():
            calls = msg.setdefault("_calls", {})
            tc = calls.setdefault(int(rest[1]), {"function": {}})
            leaf = rest[-1]
            if rest[2:4] == ["tool_call", "function"] and leaf in ("name", "arguments"):
                tc["function"][leaf] = v
            elif rest[2:] == ["tool_call", "id"]:
                tc["id"] = v
    msgs = []
    for i in sorted(out):
        m = out[i]
        calls = m.pop("_calls", None)
        if calls:
            m["tool_calls"] = [calls[j] for j in sorted(calls)]
        texts = m.pop("_texts", None)
        if texts and "content" not in m:
            m["content"] = "\n".join(texts[j] for j in sorted(texts))
        msgs.append(m)
    return msgs


def tool_message(v: Any) -> Mapping[str, Any] | None:
    """A LangChain ``ToolMessage`` dict (what OpenInference's LangChain instrumentation
    records as a tool span's ``output.value``), flattened from its serialised shapes;
    None for anything else."""
    if not isinstance(v, dict):
        return None
    m = unwrap_message(v)
    if m.get("type") != "tool" or "content" not in m:
        return None
    return m
