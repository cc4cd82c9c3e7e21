"""A Python function as the agent under test: ``package.module:function``.

The function receives the :class:`~agenteval.cases.case.Case`, and also the 0-based ``repeat``
index when its signature takes a second positional parameter or one named ``repeat``.
It may return:

- a ``str``: the answer; ``None``: no answer; an ``int``/``float``: the answer as text;
- a ``dict`` with any of ``output``, ``tool_calls`` (dicts or :class:`ToolCall`),
  ``usage`` (one ``{model, input_tokens, output_tokens}`` or a list), ``messages``,
  ``tools``, ``metadata``, ``retries``, ``failure`` (``{cause, message}``: the trial fails
  with that cause); other keys are an error;
- a :class:`~agenteval.trials.trial.Trial` (same fields) or an
  :class:`~agenteval.agents.base.AgentOutput`.

A ``failure`` keeps what else the result holds: its ``tool_calls``, ``messages``, usage
and retries are recorded on the failed trial (calls of failed trials are still scored);
without returned calls, the calls capture saw are kept.

Each call gets its own deep copy of the case, so an agent that changes the case (appends
to ``case.input``, clears ``case.must_not_contain``) changes neither later calls nor what
the trial is scored against.

``async def`` functions are awaited on the event loop. Plain functions run on the agent's
own daemon threads (not the event loop's default pool): one thread per call in flight,
reused when it is free, so there are never more busy threads than calls the runner has in
flight (``--concurrency``), a call starts at once, and one agent that hangs never delays
the others. A thread cannot be killed: a call that times out (or is cancelled by Ctrl-C
twice) is recorded, and its thread is left to finish on its own; the process does not
wait for it when the run ends. Exceptions propagate unchanged (the runner records them as
``agent_error``, ``SystemExit`` and other ``BaseException`` included); :class:`AgentFailure`
passes through with its cause.

With ``capture_proxy=UPSTREAM`` (``--capture-proxy``) each call gets its own base URL of
a recording proxy in front of the OpenAI-compatible ``UPSTREAM``
(:mod:`agenteval.traces.proxy`): as the ``model_base_url`` keyword when the function
takes one (a parameter without default makes ``capture_proxy`` required), and from
:func:`agenteval.traces.proxy.model_base_url` anywhere in the call.

Tool calls need not be returned: with ``capture="auto"`` (the default) and
``opentelemetry-sdk`` installed, the spans the agent's own instrumentation emits during
the call are mapped to the trial (:mod:`agenteval.traces`), and a returned ``messages``
transcript is read for calls (:mod:`agenteval.trials.transcripts`); precedence in
:mod:`agenteval.traces.merge`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import inspect
import queue
import threading
from collections.abc import Callable
from typing import Any

from agenteval._util.imports import load_callable
from agenteval._util.secrets import redact_url
from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.errors import FieldName, InputError
from agenteval.traces.capture import capture_source
from agenteval.traces.merge import Seen, keep_partial, merge, watch
from agenteval.trials.trial import Retry, ToolCall, Trial, Usage

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
        p
        for p in params
        if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
        and p.name != URL_PARAM  # passed by keyword (--capture-proxy)
    ]
    if not positional and not any(p.kind is kinds.VAR_POSITIONAL for p in params):
        raise InputError(f"agent '{target}' must take the case as its first parameter")
    if len(positional) >= 2:
        return "positional"
    if any(p.name == "repeat" and p.kind is kinds.KEYWORD_ONLY for p in params):
        return "keyword"
    return ""


URL_PARAM = "model_base_url"
"""The keyword a Python agent takes to receive its trial's ``--capture-proxy`` base URL."""


def _url_mode(fn: Callable[..., Any]) -> str:
    """'' (no such parameter), 'optional' or 'required': the ``model_base_url`` keyword."""
    try:
        p = inspect.signature(fn).parameters.get(URL_PARAM)
    except (TypeError, ValueError):
        return ""
    if p is None or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
        return ""
    return "optional" if p.default is not p.empty else "required"


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
    )


_Job = tuple[
    asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[[], Any]
]


class AgentThreads:
    """Daemon threads for a sync agent: a call starts at once on a free thread, or on a new
    one when all are busy (so a hung call holds one thread and delays nobody).

    :meth:`call` returns an asyncio future for the result (or the exception, any
    ``BaseException`` included). Cancelling the future abandons the call: its thread runs
    on and is reused once the function returns. :meth:`close` lets the free threads end.
    """

    def __init__(self, name: str = "agenteval-agent") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._free = 0  # threads waiting for a job, minus jobs already promised to them
        self._threads = 0

    @property
    def threads(self) -> int:
        """Threads started and not yet ended (busy, free or hung)."""
        return self._threads

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
        """Run ``fn(*args, **kwargs)`` on a thread; the future resolves on this loop."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            spawn = self._free == 0
            if spawn:
                self._threads += 1
            else:
                self._free -= 1
        ctx = contextvars.copy_context()
        self._jobs.put((loop, fut, ctx, lambda: fn(*args, **kwargs)))
        if spawn:
            t = threading.Thread(target=self._work, name=f"{self._name}-{self._threads}")
            t.daemon = True
            t.start()
        return fut

    def close(self) -> None:
        """Let every thread end once it is free (a hung one ends when its call returns)."""
        with self._lock:
            n, self._free = self._threads, 0
        for _ in range(n):
            self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, fut, ctx, thunk = job
            try:
                result: tuple[bool, Any] = (True, ctx.run(thunk))
            except BaseException as e:  # handed to the caller, whatever it is
                result = (False, e)
            with self._lock:  # free before the caller hears of it, so it may reuse us
                self._free += 1
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_resolve, fut, result)
            del job, fut, result  # do not keep the result alive while waiting
        with self._lock:
            self._threads -= 1


def _resolve(fut: asyncio.Future[Any], result: tuple[bool, Any]) -> None:
    if fut.cancelled():
        return
    ok, value = result
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class PythonAgent:
    """Calls a Python function for each case (see the module docstring for the contract)."""

    def __init__(
        self,
        target: str | Callable[..., Any],
        *,
        capture: str = "auto",
        capture_proxy: str | None = None,
    ) -> None:
        if isinstance(target, str):
            self.target = target
            self.fn: Callable[..., Any] = load_callable(target, what="agent", option="agent")
        else:
            self.fn = target
            self.target = f"{getattr(target, '__module__', '?')}:" + getattr(
                target, "__qualname__", type(target).__name__
            )
        self._ref = target if isinstance(target, str) else None
        self._capture_mode = capture
        self._capture_proxy = capture_proxy
        self._repeat_mode = _repeat_mode(self.fn, self.target)
        self._async = _is_async(self.fn)
        self._threads: AgentThreads | None = None
        self._capture = capture_source(capture)
        self._proxy = _proxy(capture_proxy, self._capture) if capture_proxy else None
        self._url_mode = _url_mode(self.fn)
        if self._url_mode == "required" and self._proxy is None:
            says = f"agent '{self.target}' takes '{URL_PARAM}': run it with "
            how = " UPSTREAM_BASE_URL (or give the parameter a default)"
            raise InputError((says, FieldName("capture_proxy"), how))
        if self._proxy is not None:
            self._capture = self._proxy[1]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (for worker processes) as its import path when it was given one and
        names a function or class: each worker imports it again. Otherwise (a callable
        object, or a function passed in) the callable itself is pickled."""
        plain = inspect.isfunction(self.fn) or inspect.isclass(self.fn) or inspect.ismethod(self.fn)
        what: Any = self._ref if self._ref is not None and plain else self.fn
        return (_rebuild, (what, self._capture_mode, self._capture_proxy))

    def describe(self) -> dict[str, Any]:
        """``{kind: "python", target}``."""
        desc = {"kind": "python", "target": self.target}
        if self._proxy is not None:
            desc["capture_proxy"] = redact_url(self._proxy[0].upstream)
        return desc

    async def start(self) -> None:
        """Start the ``capture_proxy`` (threads for a sync function start with the first
        call)."""
        if self._proxy is not None:
            await self._proxy[0].start()

    async def close(self) -> None:
        """Let the sync function's free threads end (a hung one is left to finish)."""
        if self._threads is not None:
            self._threads.close()
            self._threads = None
        if self._proxy is not None:
            await self._proxy[0].close()

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Call the function on a deep copy of the case and normalise what it returns."""
        own = own_copy(case)
        args: tuple[Any, ...] = (own, repeat) if self._repeat_mode == "positional" else (own,)
        kwargs: dict[str, Any] = {"repeat": repeat} if self._repeat_mode == "keyword" else {}
        with watch(self._capture, rec) as seen:
            if self._url_mode and self._proxy is not None:
                # imported on first use, so that importing this module stays light
                from agenteval.traces.proxy import model_base_url

                kwargs[URL_PARAM] = model_base_url()
            if self._async:
                result = await self.fn(*args, **kwargs)
            else:
                if self._threads is None:
                    self._threads = AgentThreads()
                result = await self._threads.call(self.fn, *args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
        return normalize_result(result, rec, self.target, seen)


def _rebuild(what: Any, capture: str, capture_proxy: str | None) -> PythonAgent:
    """A worker's copy of a pickled :class:`PythonAgent` (its own proxy, if any)."""
    return PythonAgent(what, capture=capture, capture_proxy=capture_proxy)


def _proxy(upstream: str, capture: Any) -> tuple[Any, Any]:
    """The recording proxy for ``upstream`` and the capture that adds it (last) to
    ``capture``: span capture, when on, comes first (it knows tool errors for sure)."""
    # imported on first use, so that importing this module stays light
    from agenteval.traces.capture import Captures
    from agenteval.traces.proxy import RecordingProxy, check_upstream

    proxy = RecordingProxy(check_upstream(upstream))
    if capture is None:
        return proxy, proxy
    sources = capture.sources if isinstance(capture, Captures) else [capture]
    return proxy, Captures([*sources, proxy])


def own_copy(case: Case) -> Case:
    """A deep copy of ``case`` for one call: every list and dict is new (the case's values
    are JSON values, copied ~4x faster than ``model_copy(deep=True)``)."""
    new = copy.copy(case)  # pydantic's copy: fields set, extras and private state kept
    fields = new.__dict__
    for name, value in fields.items():
        if type(value) is list or type(value) is dict:
            fields[name] = _json_copy(value)
    return new


def _json_copy(value: Any) -> Any:
    t = type(value)
    if t is list:
        return [_json_copy(v) for v in value]
    if t is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    return value  # str, numbers, None: immutable


def normalize_result(
    result: Any, rec: Recorder, target: str = "agent", seen: Seen | None = None
) -> AgentOutput:
    """Turn what an agent function returned into an :class:`AgentOutput`.

    Usage and retries go into ``rec``. Raises ``AgentFailure`` for a result carrying a
    ``failure`` (its tool calls and messages go into ``rec`` first, else the calls capture
    saw, so the failed trial keeps them), and ``TypeError`` naming ``target`` for anything
    unsupported. Calls come from the result, else its ``messages``, else ``seen`` (see
    :mod:`agenteval.traces.merge`).
    """
    try:
        out = _normalize(result, rec, target)
    except AgentFailure:
        if seen is not None and seen.trajectory is not None:
            keep_partial(seen.trajectory, rec, seen.source)  # returned calls (in rec) win
        raise
    return merge(out, seen, rec)


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
    usage = data.get("usage") or []
    for u in usage if isinstance(usage, list) else [usage]:
        parsed = Usage.model_validate(u)
        rec.add_usage(parsed.model, parsed.input_tokens, parsed.output_tokens)
    rec.retries.extend(Retry.model_validate(r) for r in data.get("retries") or [])
    raw_calls = data.get("tool_calls")
    tool_calls = None if raw_calls is None else [ToolCall.model_validate(c) for c in raw_calls]
    failure = data.get("failure")
    if failure:
        if tool_calls is not None:  # the failed trial keeps the calls made before it failed
            rec.tool_calls = tool_calls
        if data.get("messages") is not None:
            rec.messages = data["messages"]
        cause = failure.get("cause", "agent_error") if isinstance(failure, dict) else "agent_error"
        message = failure.get("message", "") if isinstance(failure, dict) else str(failure)
        raise AgentFailure(str(cause), str(message))
    output = data.get("output")
    if output is not None and not isinstance(output, str):
        output = str(output)
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
