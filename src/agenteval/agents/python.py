"""A Python function as the agent under test: ``package.module:function``.

The function receives the :class:`~agenteval.case.Case`, and also the 0-based ``repeat``
index when its signature takes a second positional parameter or one named ``repeat``.
It may return:

- a ``str``: the answer; ``None``: no answer; an ``int``/``float``: the answer as text;
- a ``dict`` with any of ``output``, ``tool_calls`` (dicts or :class:`ToolCall`),
  ``usage`` (one ``{model, input_tokens, output_tokens}`` or a list), ``messages``,
  ``tools``, ``metadata``, ``retries``, ``failure`` (``{cause, message}``: the trial fails
  with that cause); other keys are an error;
- a :class:`~agenteval.trial.Trial` (same fields) or an
  :class:`~agenteval.agents.base.AgentOutput`.

``async def`` functions are awaited on the event loop. Plain functions run in a worker
thread (``asyncio.to_thread``), so a blocking agent does not stall the others, but only as
many run at once as the default thread pool allows (``min(32, CPUs + 4)``): sync agents
should be fast, or be written ``async``. Exceptions propagate unchanged (the runner
records them as ``agent_error``); :class:`AgentFailure` passes through with its cause.

Tool calls need not be returned: with ``capture="auto"`` (the default) and
``opentelemetry-sdk`` installed, the spans the agent's own instrumentation emits during
the call are mapped to the trial (:mod:`agenteval.traces`), and a returned ``messages``
transcript is read for calls (:mod:`agenteval.transcripts`); precedence in
:mod:`agenteval.traces.merge`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from agenteval._imports import load_callable
from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.case import Case
from agenteval.errors import InputError
from agenteval.traces.capture import capture_source
from agenteval.traces.merge import Seen, merge, watch
from agenteval.trial import Retry, ToolCall, Trial, Usage

_DICT_KEYS = frozenset(
    {"output", "tool_calls", "usage", "messages", "tools", "metadata", "retries", "failure"}
)
_IGNORED_KEYS = frozenset({"case_id", "repeat", "latency", "started_at", "scores"})


def _repeat_mode(fn: Callable[..., Any], target: str) -> str:
    """'' (case only), 'positional' or 'keyword': how the repeat index is passed."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ""
    kinds = inspect.Parameter
    positional = [
        p for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    if not positional and not any(p.kind is kinds.VAR_POSITIONAL for p in params):
        raise InputError(f"agent '{target}' must take the case as its first parameter")
    if len(positional) >= 2:
        return "positional"
    if any(p.name == "repeat" and p.kind is kinds.KEYWORD_ONLY for p in params):
        return "keyword"
    return ""


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
    )


class PythonAgent:
    """Calls a Python function for each case (see the module docstring for the contract)."""

    def __init__(self, target: str | Callable[..., Any], *, capture: str = "auto") -> None:
        if isinstance(target, str):
            self.target = target
            self.fn: Callable[..., Any] = load_callable(target, what="agent", option="--agent")
        else:
            self.fn = target
            self.target = f"{getattr(target, '__module__', '?')}:" + getattr(
                target, "__qualname__", type(target).__name__
            )
        self._repeat_mode = _repeat_mode(self.fn, self.target)
        self._async = _is_async(self.fn)
        self._capture = capture_source(capture)

    def describe(self) -> dict[str, Any]:
        """``{kind: "python", target}``."""
        return {"kind": "python", "target": self.target}

    async def start(self) -> None:
        """Nothing to open."""

    async def close(self) -> None:
        """Nothing to release."""

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Call the function and normalise what it returns (module docstring)."""
        args: tuple[Any, ...] = (case, repeat) if self._repeat_mode == "positional" else (case,)
        kwargs = {"repeat": repeat} if self._repeat_mode == "keyword" else {}
        with watch(self._capture, rec) as seen:
            if self._async:
                result = await self.fn(*args, **kwargs)
            else:
                result = await asyncio.to_thread(self.fn, *args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
        return normalize_result(result, rec, self.target, seen)


def normalize_result(
    result: Any, rec: Recorder, target: str = "agent", seen: Seen | None = None
) -> AgentOutput:
    """Turn what an agent function returned into an :class:`AgentOutput`.

    Usage and retries go into ``rec``. Raises ``AgentFailure`` for a result carrying a
    ``failure``, and ``TypeError`` naming ``target`` for anything unsupported. Calls come
    from the result, else its ``messages``, else ``seen`` (see :mod:`agenteval.traces.merge`).
    """
    return merge(_normalize(result, rec, target), seen, rec)


def _normalize(result: Any, rec: Recorder, target: str) -> AgentOutput:
    if isinstance(result, AgentOutput):
        return result
    if result is None or isinstance(result, str):
        return AgentOutput(output=result)
    if isinstance(result, int | float) and not isinstance(result, bool):
        return AgentOutput(output=str(result))
    if isinstance(result, Trial):
        data: dict[str, Any] = {
            "output": result.output,
            "tool_calls": result.tool_calls,
            "usage": result.usage,
            "messages": result.messages,
            "tools": result.tools,
            "metadata": result.metadata,
            "retries": result.retries,
            "failure": result.failure.model_dump() if result.failure else None,
        }
        return _from_dict(data, rec, target)
    if isinstance(result, dict):
        return _from_dict(result, rec, target)
    raise TypeError(
        f"{target} returned {type(result).__name__}; expected str, None, dict, Trial or AgentOutput"
    )


def _from_dict(data: dict[str, Any], rec: Recorder, target: str) -> AgentOutput:
    unknown = sorted(str(k) for k in set(data) - _DICT_KEYS - _IGNORED_KEYS)
    if unknown:
        raise TypeError(
            f"{target} returned a dict with unknown key(s) {', '.join(unknown)};"
            f" allowed: {', '.join(sorted(_DICT_KEYS))}"
        )
    failure = data.get("failure")
    if failure:
        cause = failure.get("cause", "agent_error") if isinstance(failure, dict) else "agent_error"
        message = failure.get("message", "") if isinstance(failure, dict) else str(failure)
        raise AgentFailure(str(cause), str(message))
    usage = data.get("usage") or []
    for u in usage if isinstance(usage, list) else [usage]:
        parsed = Usage.model_validate(u)
        rec.add_usage(parsed.model, parsed.input_tokens, parsed.output_tokens)
    rec.retries.extend(Retry.model_validate(r) for r in data.get("retries") or [])
    output = data.get("output")
    if output is not None and not isinstance(output, str):
        output = str(output)
    raw_calls = data.get("tool_calls")
    tool_calls = None if raw_calls is None else [ToolCall.model_validate(c) for c in raw_calls]
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise TypeError(f"{target} returned 'metadata' that is not a dict")
    return AgentOutput(
        output=output,
        tool_calls=tool_calls,
        tools=data.get("tools"),
        messages=data.get("messages"),
        metadata=metadata,
    )
