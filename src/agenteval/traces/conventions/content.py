"""What model spans did not record, and the setting that would have recorded it.

Instrumentations record message content only when asked (it may hold personal data).
With content capture off a model span still says a call happened (its model, tokens,
time) but not what was said. "Not recorded" must never read as "not called", so
:func:`unrecorded_model_content` says, for spans already read into the canonical names
(:mod:`agenteval.traces.conventions`), which of :data:`~agenteval.trials.unrecorded.CONTENT`
is missing:

- ``tool_calls`` (and so ``tool_arguments`` and ``tool_results``): there are model spans,
  none of them holds any message, and there is no tool span — which tools were called is
  unknown;
- ``tool_arguments``: a tool call in a model message has no ``arguments`` (what
  openai-v2's events hold with content off: the name and id only);
- ``tool_results``: a tool message answering a call has no content.

:func:`content_setting` names the setting to turn on, from the spans' convention
(:data:`SETTINGS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agenteval.traces.attributes import json_value, openinference_messages
from agenteval.traces.records import SpanRecord

__all__ = ["SETTINGS", "content_setting", "unrecorded_model_content"]

SETTINGS = {
    "openllmetry": "TRACELOOP_TRACE_CONTENT=true (Traceloop OpenLLMetry)",
    "openinference": "OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS unset"
    " (OpenInference's TraceConfig hide_inputs=False, hide_outputs=False)",
    "adk": "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true (Google ADK)",
    "logfire": "Logfire / PydanticAI: instrument with include_content=True",
    "genai": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (with"
    " OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental: SPAN_ONLY, or EVENT_ONLY"
    " with the log records exported too)",
}
"""The content setting of each convention family."""


def content_setting(spans: Sequence[SpanRecord]) -> str:
    """The setting that records message content, for the convention the spans use."""
    for s in spans:
        a = s.attributes
        traceloop = ("llm.request.type", "gen_ai.openai.api_base", "gen_ai.is_streaming")
        if any(k in a for k in traceloop) or any(k.startswith("traceloop.") for k in a):
            return SETTINGS["openllmetry"]
        if "openinference.span.kind" in a:
            return SETTINGS["openinference"]
        if a.get("gen_ai.system") == "gcp.vertex.agent" or s.name == "call_llm":
            return SETTINGS["adk"]
        if "logfire.msg" in a or "logfire.span_type" in a:
            return SETTINGS["logfire"]
    return SETTINGS["genai"]


def _messages(s: SpanRecord, side: str) -> list[Any] | None:
    a = s.attributes
    key = f"gen_ai.{side}.messages"
    if key in a:
        raw = json_value(a[key])
        return raw if isinstance(raw, list) else None
    msgs = openinference_messages(a, f"llm.{side}_messages.")
    return msgs or None


def _gaps(msgs: list[Any]) -> tuple[bool, bool]:
    """(a call without arguments, a tool answer without content) among ``msgs``."""
    no_args = no_result = False
    for m in msgs:
        if not isinstance(m, Mapping):
            continue
        for c in m.get("tool_calls") or ():
            fn = c.get("function") if isinstance(c, Mapping) else None
            if isinstance(fn, Mapping) and "arguments" not in fn:
                no_args = True
        if m.get("role") == "tool" and "content" not in m and "parts" not in m:
            no_result = True
        for p in m.get("parts") or ():
            if not isinstance(p, Mapping):
                continue
            if p.get("type") == "tool_call" and "arguments" not in p:
                no_args = True
            if p.get("type") == "tool_call_response" and not ({"response", "result"} & set(p)):
                no_result = True
    return no_args, no_result


def unrecorded_model_content(models: Sequence[SpanRecord], tool_spans: int) -> list[str]:
    """What the model spans did not record (module docstring), in ``CONTENT`` order."""
    if not models:
        return []
    seen: list[Any] = []
    any_messages = False
    for s in models:
        for side in ("input", "output"):
            got = _messages(s, side)
            if got is not None:
                any_messages = True
                seen.extend(got)
    if not any_messages:
        return [] if tool_spans else ["tool_calls", "tool_arguments", "tool_results"]
    no_args, no_result = _gaps(seen)
    return [n for n, b in (("tool_arguments", no_args), ("tool_results", no_result)) if b]
