"""Traceloop OpenLLMetry's flattened attributes (before ``gen_ai.input.messages``).

OpenLLMetry's instrumentations up to the 0.5x series record a model call as a span named
after the client call (``openai.chat``) with ``llm.request.type`` (``chat``,
``completion``), ``gen_ai.system`` and no ``gen_ai.operation.name``; its messages are
flattened, one attribute per field:

- ``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_call_id`` and
  ``gen_ai.prompt.N.tool_calls.M.id`` / ``.name`` / ``.arguments``: the request's
  messages;
- ``gen_ai.completion.N.role`` / ``.content`` / ``.finish_reason`` and
  ``gen_ai.completion.N.tool_calls.M.*`` (older: ``gen_ai.completion.N.function_call.name``
  / ``.arguments``): the response;
- ``llm.request.functions.N.name`` / ``.description`` / ``.parameters``: the tools offered;
- usage in ``gen_ai.usage.prompt_tokens`` / ``completion_tokens`` (read by the mapping).

:func:`from_flattened` rebuilds ``gen_ai.input.messages`` / ``gen_ai.output.messages``
(chat messages), ``gen_ai.tool.definitions`` and ``gen_ai.operation.name`` (``chat`` or
``text_completion``) when the span lacks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["from_flattened"]

_TYPES = {"chat": "chat", "completion": "text_completion"}


def _messages(a: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for k, v in a.items():
        if not k.startswith(prefix):
            continue
        parts = k[len(prefix) :].split(".")
        if not parts[0].isdigit() or len(parts) < 2:
            continue
        msg = out.setdefault(int(parts[0]), {})
        rest = parts[1:]
        if len(rest) == 1 and rest[0] in ("role", "content", "tool_call_id", "name"):
            msg[rest[0]] = v
        elif rest[0] == "tool_calls" and len(rest) == 3 and rest[1].isdigit():
            calls = msg.setdefault("_calls", {})
            tc = calls.setdefault(int(rest[1]), {"type": "function", "function": {}})
            if rest[2] == "id":
                tc["id"] = v
            elif rest[2] in ("name", "arguments"):
                tc["function"][rest[2]] = v
        elif rest[0] == "function_call" and len(rest) == 2 and rest[1] in ("name", "arguments"):
            calls = msg.setdefault("_calls", {})
            calls.setdefault(0, {"type": "function", "function": {}})["function"][rest[1]] = v
    msgs = []
    for i in sorted(out):
        m = out[i]
        calls = m.pop("_calls", None)
        if calls:
            m["tool_calls"] = [calls[j] for j in sorted(calls)]
        m.setdefault("role", "assistant" if prefix.startswith("gen_ai.completion") else "user")
        msgs.append(m)
    return msgs


def _functions(a: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    i = 0
    while f"llm.request.functions.{i}.name" in a:
        d: dict[str, Any] = {"name": a[f"llm.request.functions.{i}.name"]}
        for k in ("description", "parameters"):
            if f"llm.request.functions.{i}.{k}" in a:
                d[k] = a[f"llm.request.functions.{i}.{k}"]
        out.append(d)
        i += 1
    return out


def from_flattened(a: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes a span with OpenLLMetry's flattened fields lacks (module docstring);
    empty for any other span."""
    out: dict[str, Any] = {}
    kind = _TYPES.get(str(a.get("llm.request.type", "")))
    if kind is not None and "gen_ai.operation.name" not in a:
        out["gen_ai.operation.name"] = kind
    flat = "gen_ai.prompt.0.role" in a or "gen_ai.prompt.0.content" in a
    if flat and "gen_ai.input.messages" not in a:
        out["gen_ai.input.messages"] = _messages(a, "gen_ai.prompt.")
    if "gen_ai.output.messages" not in a and any(k.startswith("gen_ai.completion.0.") for k in a):
        out["gen_ai.output.messages"] = _messages(a, "gen_ai.completion.")
    if "gen_ai.tool.definitions" not in a and "llm.request.functions.0.name" in a:
        out["gen_ai.tool.definitions"] = _functions(a)
    return out
