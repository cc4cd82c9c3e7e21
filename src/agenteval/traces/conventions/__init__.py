"""Every GenAI telemetry convention, read into one: the names the span mapping reads.

Instrumentation libraries record the same model call and tool call under different
names, on span attributes, span events or OTel log records (joined to spans as events,
:mod:`agenteval.traces.logs`). :func:`normalise` adds to each span the canonical
attributes it lacks — ``gen_ai.operation.name``, ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.tool.definitions``, ``gen_ai.tool.call.arguments``
/ ``result`` — from, in order:

1. its events (:mod:`.events`: the per-message events and the
   ``gen_ai.client.inference.operation.details`` event);
2. OpenLLMetry's flattened ``gen_ai.prompt.N.*`` attributes (:mod:`.openllmetry`);
3. Google ADK's ``gcp.vertex.agent.*`` attributes and OpenInference TOOL spans' wrapped
   Python call (:mod:`.frameworks`).

OpenInference's hidden values (``__REDACTED__``, with ``OPENINFERENCE_HIDE_INPUTS`` /
``_OUTPUTS``) are removed: they read as not recorded. What a span has already is never
replaced, so a span in the current convention is
returned as is (the same object). Pure and idempotent: the in-process capture, the
receiver and ``import-traces`` all map spans through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agenteval.traces.conventions.events import from_events
from agenteval.traces.conventions.frameworks import from_adk, unwrap_tool_input
from agenteval.traces.conventions.openllmetry import from_flattened
from agenteval.traces.records import SpanRecord

__all__ = ["normalise", "normalise_span"]

_REDACTED = "__REDACTED__"


def normalise_span(s: SpanRecord) -> SpanRecord:
    """``s`` with the canonical attributes it lacks (module docstring)."""
    a = s.attributes
    extra: dict[str, Any] = {}
    if s.events:
        extra.update(from_events(s))
    if "llm.request.type" in a or "gen_ai.prompt.0.role" in a or "gen_ai.completion.0.role" in a:
        for k, v in from_flattened(a).items():
            extra.setdefault(k, v)
    adk = ("gcp.vertex.agent.tool_call_args", "gcp.vertex.agent.llm_request")
    if s.name == "call_llm" or any(k in a for k in adk):
        for k, v in from_adk(s.name, a).items():
            extra.setdefault(k, v)
    if "input.value" in a:
        extra.update(unwrap_tool_input(a))
    redacted = "openinference.span.kind" in a and _REDACTED in a.values()
    if not extra and not redacted:
        return s
    attrs = {**a, **extra}
    if redacted:  # OpenInference's hidden values: not recorded
        attrs = {k: v for k, v in attrs.items() if v != _REDACTED}
    return replace(s, attributes=attrs)


def normalise(spans: Iterable[SpanRecord]) -> list[SpanRecord]:
    """Every span through :func:`normalise_span`, in order."""
    return [normalise_span(s) for s in spans]
