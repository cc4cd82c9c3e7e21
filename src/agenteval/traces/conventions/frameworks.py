"""Framework-specific span attributes: Google ADK's legacy ones, OpenInference tool inputs.

**Google ADK** (``gcp.vertex.agent`` tracer) records, besides the GenAI names:

- on ``execute_tool`` spans, ``gcp.vertex.agent.tool_call_args`` (JSON: the arguments)
  and ``gcp.vertex.agent.tool_response`` (JSON: the response, a non-object result
  wrapped as ``{"result": ...}``, unwrapped here) — ``gen_ai.tool.call.arguments`` and
  ``gen_ai.tool.call.result``; ``<not specified>`` means no response;
- ``call_llm`` spans (no ``gen_ai.operation.name``; ``gen_ai.system =
  gcp.vertex.agent``): ``gcp.vertex.agent.llm_request`` (JSON: ``contents``, Gemini
  ``{"role", "parts": [{"text"} | {"function_call": {"id", "name", "args"}} |
  {"function_response": {"id", "name", "response"}}]}``) and
  ``gcp.vertex.agent.llm_response`` (JSON: ``content``, one such message) — a model
  call (``generate_content``) with ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  in GenAI parts. With ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false`` these attributes
  are empty and nothing is read.

**OpenInference** TOOL spans of smolagents and LlamaIndex record the Python call as
``input.value``: ``{"args": [...], "kwargs": {...}}`` (smolagents adds
``sanitize_inputs_outputs``). With no positional arguments the ``kwargs`` are the call's
arguments; with positional ones the names are unknown, so the arguments come from the
model's call the span is paired with (the mapping's fallback).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.traces.attributes import json_value

__all__ = ["from_adk", "unwrap_tool_input"]

_ROLES = {"model": "assistant", "user": "user", "system": "system", "tool": "tool"}
_CALL_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def _gemini_message(c: Any) -> dict[str, Any] | None:
    if not isinstance(c, Mapping):
        return None
    parts: list[dict[str, Any]] = []
    for p in c.get("parts") or ():
        if not isinstance(p, Mapping):
            continue
        fc, fr = p.get("function_call"), p.get("function_response")
        if isinstance(p.get("text"), str):
            parts.append({"type": "text", "content": p["text"]})
        elif isinstance(fc, Mapping):
            parts.append(
                {
                    "type": "tool_call",
                    "id": fc.get("id"),
                    "name": fc.get("name"),
                    "arguments": fc.get("args") or {},
                }
            )
        elif isinstance(fr, Mapping):
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": fr.get("id"),
                    "name": fr.get("name"),
                    "response": _unwrap_result(fr.get("response")),
                }
            )
    role = _ROLES.get(str(c.get("role") or ""), str(c.get("role") or "user"))
    return {"role": role, "parts": parts}


def _unwrap_result(v: Any) -> Any:
    v = json_value(v)
    if isinstance(v, Mapping) and list(v) == ["result"]:
        return v["result"]
    return v


def from_adk(name: str, a: Mapping[str, Any]) -> dict[str, Any]:
    """The GenAI attributes an ADK span lacks (module docstring); empty for others."""
    out: dict[str, Any] = {}
    if "gcp.vertex.agent.tool_call_args" in a and "gen_ai.tool.call.arguments" not in a:
        args = json_value(a["gcp.vertex.agent.tool_call_args"])
        if isinstance(args, Mapping):
            out["gen_ai.tool.call.arguments"] = dict(args)
    resp = a.get("gcp.vertex.agent.tool_response")
    if resp is not None and resp != "<not specified>" and "gen_ai.tool.call.result" not in a:
        got = json_value(resp)
        if got != {}:
            out["gen_ai.tool.call.result"] = _unwrap_result(got)
    if name == "call_llm" or a.get("gen_ai.system") == "gcp.vertex.agent":
        if "gen_ai.operation.name" not in a and "gcp.vertex.agent.llm_request" in a:
            out["gen_ai.operation.name"] = "generate_content"
        req = json_value(a.get("gcp.vertex.agent.llm_request"))
        if isinstance(req, Mapping) and "gen_ai.input.messages" not in a:
            msgs = [_gemini_message(c) for c in req.get("contents") or ()]
            if msgs:
                out["gen_ai.input.messages"] = [m for m in msgs if m is not None]
        res = json_value(a.get("gcp.vertex.agent.llm_response"))
        if isinstance(res, Mapping) and "gen_ai.output.messages" not in a:
            m = _gemini_message(res.get("content"))
            if m is not None:
                out["gen_ai.output.messages"] = [m]
    return out


def unwrap_tool_input(a: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenInference TOOL span's ``input.value`` when it is the Python call (module
    docstring): the keyword arguments, or (positional arguments) the bare list, which is
    not an object, so the mapping pairs the span with the model's call."""
    if str(a.get("openinference.span.kind", "")).upper() != "TOOL" or "input.value" not in a:
        return {}
    v = json_value(a["input.value"])
    if not isinstance(v, Mapping) or "kwargs" not in v or not _CALL_KEYS.issuperset(v):
        return {}
    args, kwargs = v.get("args") or [], v.get("kwargs")
    if args or not isinstance(kwargs, Mapping):
        return {"input.value": list(args) if isinstance(args, list) else args}
    return {"input.value": dict(kwargs)}
