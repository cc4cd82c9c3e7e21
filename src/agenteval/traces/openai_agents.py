"""Capture for the OpenAI Agents SDK (``openai-agents``, imported as ``agents``).

The SDK traces with its own processors, not OpenTelemetry. On the first trial,
:class:`OpenAIAgentsCapture` adds one processor with ``agents.add_trace_processor`` (once
per process; the user's processors and the SDK's exporter stay as they are — never
``set_trace_processors``). Spans are keyed by context, as in
:mod:`agenteval.traces.capture`: around each agent call a context variable holds the
trial's span list, and ``on_span_start`` appends the new span to the list of the context
that starts it. The SDK runs tools and model calls in tasks of the run, which copy the
context, so concurrent trials never mix.

Each SDK span becomes a plain :class:`~agenteval.traces.records.SpanRecord` with the
OpenTelemetry GenAI attributes :func:`~agenteval.traces.mapping.trajectory_from_spans`
reads (:func:`span_record`):

- a **function** span is a tool call: name, ``input`` → arguments, ``output`` → result;
  a span with an ``error`` is an error (``"<message>: <data.error>"``), its output is not
  a result; a span not yet ended is an unfinished call;
- a **response** span (Responses API) and a **generation** span (chat completions) are
  model calls: the model (the response's, else the generation's) and its ``usage``
  (``input_tokens``, ``output_tokens``; cached and reasoning tokens go to token details);
  the calls the model asked for (the response's ``function_call`` items, else the
  generation's output messages) as ``gen_ai.output.messages``, and the function tools the
  request offered (the response echoes them) as ``gen_ai.tool.definitions``. A function
  span carries no call id: the mapping pairs it with the model's call of the same name,
  in order, and takes that call's id;
- every other span (agent, turn, handoff, guardrail...) is ignored.

Nothing is seen when the SDK's tracing is disabled (``OPENAI_AGENTS_DISABLE_TRACING=1``
or ``set_tracing_disabled(True)``): the SDK then calls no processor. Whether the SDK's own
exporter uploads traces to OpenAI is the application's setting, left alone.
"""

from __future__ import annotations

import contextvars
import importlib.metadata
import importlib.util
import sys
import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from agenteval.traces.collect import SpanListTrial, collect_spans
from agenteval.traces.records import SpanRecord

__all__ = ["OpenAIAgentsCapture", "sdk_available", "sdk_loaded", "span_record"]

_CURRENT: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "agenteval_trial_sdk_spans", default=None
)
_ATTACH_LOCK = threading.Lock()
_MARK = "_agenteval_capture_attached"


def sdk_available() -> bool:
    """True when ``openai-agents`` is installed and ``agents`` can be imported (checked
    without importing it)."""
    try:
        importlib.metadata.distribution("openai-agents")
        return importlib.util.find_spec("agents") is not None
    except (ImportError, ValueError):
        return False


def sdk_loaded() -> bool:
    """True when the SDK is already imported (the agent's module imported it)."""
    mod = sys.modules.get("agents")
    return mod is not None and callable(getattr(mod, "add_trace_processor", None))


def _processor() -> Any:
    from agents.tracing import TracingProcessor

    class _TrialSpanProcessor(TracingProcessor):
        """Appends each started SDK span to the span list of the trial whose context
        starts it."""

        def on_trace_start(self, trace: Any) -> None:
            return None

        def on_trace_end(self, trace: Any) -> None:
            return None

        def on_span_start(self, span: Any) -> None:
            spans = _CURRENT.get()
            if spans is not None:
                spans.append(span)

        def on_span_end(self, span: Any) -> None:
            return None

        def shutdown(self) -> None:
            return None

        def force_flush(self) -> None:
            return None

    return _TrialSpanProcessor()


def _attach() -> bool:
    """Add our processor to the SDK's trace provider (once per provider)."""
    try:
        from agents.tracing import add_trace_processor, get_trace_provider
    except ImportError:
        return False
    with _ATTACH_LOCK:
        provider = get_trace_provider()
        if getattr(provider, _MARK, False):
            return True
        add_trace_processor(_processor())
        setattr(provider, _MARK, True)
        return True


class OpenAIAgentsCapture:
    """Capture through an OpenAI Agents SDK trace processor (module docstring).

    ``only_if_loaded``: attach only when the agent's code already imported the SDK (what
    ``--capture auto`` does, so agents that do not use it never import it).
    """

    name = "openai-agents"

    def __init__(self, *, only_if_loaded: bool = False) -> None:
        self._only_if_loaded = only_if_loaded
        self._attached = False

    @property
    def attached(self) -> bool:
        """Whether our processor is registered (attaches on first use)."""
        if not self._attached and (not self._only_if_loaded or sdk_loaded()):
            self._attached = _attach()
        return self._attached

    def trial(self) -> AbstractContextManager[SpanListTrial]:
        """Collect the SDK spans started in this context until the block ends."""
        return collect_spans(_CURRENT, self.attached, span_record)


def _ns(iso: Any) -> int | None:
    if not isinstance(iso, str) or not iso:
        return None
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return int(dt.timestamp() * 1_000_000) * 1000


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _usage_attrs(usage: Any) -> dict[str, Any]:
    a: dict[str, Any] = {}
    if usage is None:
        return a
    for key in ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens"):
        v = _get(usage, key)
        if isinstance(v, int):
            a[f"gen_ai.usage.{key}"] = v
    cached = _get(_get(usage, "input_tokens_details"), "cached_tokens")
    if isinstance(cached, int) and cached:
        a["gen_ai.usage.cache_read.input_tokens"] = cached
    reasoning = _get(_get(usage, "output_tokens_details"), "reasoning_tokens")
    if isinstance(reasoning, int) and reasoning:
        a["gen_ai.usage.reasoning.output_tokens"] = reasoning
    return a


def _attributes(data: Any) -> dict[str, Any]:
    kind = getattr(data, "type", "")
    if kind == "function":
        a: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": getattr(data, "name", "") or "",
        }
        if getattr(data, "input", None) is not None:
            a["gen_ai.tool.call.arguments"] = data.input
        if getattr(data, "output", None) is not None:
            a["gen_ai.tool.call.result"] = data.output
        return a
    if kind in ("response", "generation"):
        a = {"gen_ai.operation.name": "chat"}
        response = getattr(data, "response", None)
        model = _get(response, "model") or getattr(data, "model", None)
        if model:
            a["gen_ai.response.model"] = str(model)
        usage = getattr(data, "usage", None)
        a.update(_usage_attrs(usage if usage is not None else _get(response, "usage")))
        output = getattr(data, "output", None)  # a generation's chat messages
        calls = _response_calls(response)
        if calls:
            a["gen_ai.output.messages"] = [{"role": "assistant", "parts": calls}]
        elif isinstance(output, list | tuple):
            a["gen_ai.output.messages"] = list(output)
        tools = _response_tools(response)
        if tools:
            a["gen_ai.tool.definitions"] = tools
        return a
    return {}


def _response_calls(response: Any) -> list[dict[str, Any]]:
    """The ``function_call`` items of a Responses API response, as GenAI ``tool_call``
    parts (their ``call_id`` is the id the model gave the call)."""
    parts = []
    for item in _get(response, "output") or ():
        if _get(item, "type") == "function_call":
            parts.append(
                {
                    "type": "tool_call",
                    "id": _get(item, "call_id"),
                    "name": _get(item, "name"),
                    "arguments": _get(item, "arguments"),
                }
            )
    return parts


def _response_tools(response: Any) -> list[dict[str, Any]]:
    """The function tools a Responses API request offered (the response echoes them)."""
    out = []
    for t in _get(response, "tools") or ():
        if _get(t, "type") == "function" and _get(t, "name"):
            d: dict[str, Any] = {"name": _get(t, "name")}
            d["parameters"] = _get(t, "parameters") or {"type": "object"}
            if _get(t, "description"):
                d["description"] = _get(t, "description")
            out.append(d)
    return out


def _error_text(error: Any) -> str:
    message = str(_get(error, "message") or "error")
    detail = _get(_get(error, "data"), "error")
    return f"{message}: {detail}" if detail else message


def span_record(span: Any) -> SpanRecord:
    """A plain :class:`SpanRecord` from an SDK ``Span`` (ended or not); spans of kinds the
    module docstring does not list get no attributes, so the mapping ignores them."""
    data = getattr(span, "span_data", None)
    error = getattr(span, "error", None)
    end = _ns(getattr(span, "ended_at", None))
    start = _ns(getattr(span, "started_at", None))
    return SpanRecord(
        name=str(getattr(data, "type", "span")),
        span_id=str(getattr(span, "span_id", "") or ""),
        trace_id=str(getattr(span, "trace_id", "") or ""),
        parent_id=getattr(span, "parent_id", None),
        start_ns=start,
        end_ns=end,
        attributes=_attributes(data),
        status="error" if error else "unset",
        status_message=_error_text(error) if error else None,
    )
