"""What model spans say: token usage per model, the tools offered, time inside models.

Part of the span → trajectory mapping (:mod:`agenteval.traces.mapping`): OTel GenAI
``gen_ai.usage.*`` and OpenInference ``llm.token_count.*`` counts, ``gen_ai.tool.definitions``
and ``llm.tools.N.tool.json_schema``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval.traces.attributes import json_value
from agenteval.traces.records import SpanRecord, Trajectory
from agenteval.trials.trial import Usage

__all__ = ["add_usage", "tool_definitions", "union_s"]

_MAIN_TOKENS = {
    "gen_ai.usage.input_tokens": "in",
    "gen_ai.usage.prompt_tokens": "in",
    "llm.token_count.prompt": "in",
    "gen_ai.usage.output_tokens": "out",
    "gen_ai.usage.completion_tokens": "out",
    "llm.token_count.completion": "out",
}


def _model_name(a: Mapping[str, Any]) -> str | None:
    for k in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        v = a.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def _count(v: Any) -> int:
    if isinstance(v, bool):
        return 0
    if isinstance(v, int | float) and v >= 0:
        return int(v)
    return 0


def add_usage(t: Trajectory, s: SpanRecord) -> None:
    """Add a model span's token counts to ``t.usage`` (per model) and its other token
    kinds (cache, reasoning...) to ``t.token_details``."""
    a = s.attributes
    model = _model_name(a)
    got = {"in": 0, "out": 0}
    seen = set()
    for k, which in _MAIN_TOKENS.items():
        if k in a and which not in seen:
            got[which] = _count(a[k])
            seen.add(which)
    details = t.token_details.setdefault(model or "", {})
    for k, v in a.items():
        name = ""
        if k.startswith("gen_ai.usage.") and k not in _MAIN_TOKENS:
            name = k.removeprefix("gen_ai.usage.")
        elif k.startswith("llm.token_count.") and "_details." in k:
            name = k.removeprefix("llm.token_count.")
        if name and name != "total_tokens" and _count(v):
            details[name] = details.get(name, 0) + _count(v)
    if not details:
        del t.token_details[model or ""]
    if not seen:
        return
    for u in t.usage:
        if u.model == model:
            u.input_tokens += got["in"]
            u.output_tokens += got["out"]
            return
    t.usage.append(Usage(model=model, input_tokens=got["in"], output_tokens=got["out"]))


def tool_definitions(a: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool definitions in a span's attributes (``gen_ai.tool.definitions`` and
    ``llm.tools.N.tool.json_schema``) as bare ``{name, parameters, description}``; the
    first definition of a name wins."""
    raw = json_value(a.get("gen_ai.tool.definitions"))
    defs: list[Any] = raw if isinstance(raw, list) else []
    i = 0
    while f"llm.tools.{i}.tool.json_schema" in a:
        defs.append(json_value(a[f"llm.tools.{i}.tool.json_schema"]))
        i += 1
    out: list[dict[str, Any]] = []
    for d in defs:
        if not isinstance(d, dict):
            continue
        inner = d.get("function") if isinstance(d.get("function"), dict) else d
        assert isinstance(inner, dict)
        name = inner.get("name")
        if not isinstance(name, str) or not name or any(t["name"] == name for t in out):
            continue  # no name, or defined already (both attributes list the same tools)
        params = inner.get("parameters")
        tool: dict[str, Any] = {"name": name}
        tool["parameters"] = params if isinstance(params, dict) else {"type": "object"}
        if isinstance(inner.get("description"), str):
            tool["description"] = inner["description"]
        out.append(tool)
    return out


def union_s(intervals: list[tuple[int, int]]) -> float:
    """Seconds covered by the union of ``intervals`` (nanoseconds)."""
    total = 0
    end = None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total / 1e9
