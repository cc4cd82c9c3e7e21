"""Per-trial capture: what the agent's own instrumentation saw while one trial ran.

A **capture source** watches the agent while a trial runs and hands back a
:class:`~agenteval.traces.mapping.Trajectory`. Today there is one, :class:`OtelCapture`
(in-process OpenTelemetry) and
:class:`~agenteval.traces.openai_agents.OpenAIAgentsCapture` (the OpenAI Agents SDK's own
tracing); later sources (an OTLP receiver keyed by ``traceparent``, a recording proxy)
implement the same two methods. :class:`Captures` runs several at once.

:class:`OtelCapture` keys spans by *context*, never by time: around each agent call
:meth:`OtelCapture.trial` sets a context variable holding that trial's span list, and the
span processor's ``on_start`` appends each new span to the list found in the context of
the code that starts the span. ``asyncio`` tasks and ``asyncio.to_thread`` copy the
context, so concurrent trials never mix and a sync agent run in a worker thread is seen.
A thread the agent starts itself inherits no context (as in OpenTelemetry itself): its
spans are seen only when it runs in a copied context (``contextvars.copy_context().run``).

Attaching (once per process, on the first trial): when the global tracer provider is an
SDK one (anything with ``add_span_processor``), one processor is added to it; the user's
processors and exporters stay as they are. When no provider was set at all, an SDK
``TracerProvider`` is installed with only that processor — and only then. Any other
provider (e.g. a no-op one the application set on purpose) is left alone and nothing is
captured. Spans the application's sampler drops are never started, so never seen.

The **Logs signal** is captured the same way (:mod:`agenteval.traces.capture_logs`: a
log record processor on the global ``LoggerProvider``, installed only when none is set),
so content an instrumentation emits as log records joins its spans.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, Protocol

from agenteval.errors import FieldName, InputError
from agenteval.traces.capture_logs import CURRENT_LOGS, attach_logs
from agenteval.traces.collect import SpanListTrial, collect_spans
from agenteval.traces.mapping import SpanEvent, SpanRecord, Trajectory
from agenteval.traces.otel_global import attach_processor

__all__ = [
    "CAPTURE_MODES",
    "CaptureSource",
    "Captures",
    "OtelCapture",
    "SpanListTrial",
    "TrialCapture",
    "capture_source",
    "collect_spans",
    "otel_available",
    "span_record",
]


class TrialCapture(Protocol):
    """One trial's view of a capture source."""

    def trajectory(self) -> Trajectory:
        """What was seen so far (callable again; later calls see later spans)."""
        ...


class CaptureSource(Protocol):
    """Something that can watch an agent while a trial runs."""

    name: str

    def trial(self) -> Any:
        """A context manager around one agent call, yielding a :class:`TrialCapture`."""
        ...


CAPTURE_MODES = ("auto", "otel", "openai-agents", "off")
"""The values of ``--capture`` / ``PythonAgent(capture=...)``."""


def capture_source(mode: str) -> CaptureSource | None:
    """The capture for ``mode``.

    ``auto``: OpenTelemetry capture when ``opentelemetry-sdk`` is installed, plus OpenAI
    Agents SDK capture when the agent's code imported the SDK (both: :class:`Captures`);
    ``otel`` / ``openai-agents``: only that one, an InputError when its package is not
    installed; ``off``: none.
    """
    # imported on first use, so that importing this module stays light
    from agenteval.traces.openai_agents import OpenAIAgentsCapture, sdk_available

    if mode not in CAPTURE_MODES:
        raise InputError(f"capture must be one of {', '.join(CAPTURE_MODES)}, got {mode!r}")
    if mode == "off":
        return None
    if mode == "openai-agents":
        if not sdk_available():
            raise InputError(
                (
                    FieldName("capture"),
                    " openai-agents needs openai-agents: pip install -e '.[openai-agents]'",
                )
            )
        return OpenAIAgentsCapture()
    if mode == "otel":
        if not otel_available():
            raise InputError(
                (FieldName("capture"), " otel needs opentelemetry-sdk: pip install -e '.[otel]'")
            )
        return OtelCapture()
    sources: list[CaptureSource] = []
    if sdk_available():
        sources.append(OpenAIAgentsCapture(only_if_loaded=True))
    if otel_available():
        sources.append(OtelCapture())
    if not sources:
        return None
    return sources[0] if len(sources) == 1 else Captures(sources)


class _MultiTrial:
    __slots__ = ("trials",)

    def __init__(self, trials: list[tuple[str, TrialCapture]]) -> None:
        self.trials = trials

    def pick(self) -> tuple[str, Trajectory]:
        """The first source's trajectory that has tool calls, else the first non-empty
        one, else an empty one; with that source's name."""
        seen = [(name, t.trajectory()) for name, t in self.trials]
        for name, traj in seen:
            if traj.tool_calls:
                return name, traj
        for name, traj in seen:
            if not traj.empty:
                return name, traj
        return seen[0][0], Trajectory()

    @property
    def source(self) -> str:
        """The name of the source :meth:`pick` chooses."""
        return self.pick()[0]

    def trajectory(self) -> Trajectory:
        return self.pick()[1]


class Captures:
    """Several capture sources at once. One trial's data comes from one source only, never
    a mix: the first (in the given order) that saw tool calls, else the first that saw
    anything (an application traced by both the Agents SDK and OpenTelemetry would
    otherwise count its calls twice)."""

    name = "auto"

    def __init__(self, sources: list[CaptureSource]) -> None:
        self.sources = sources

    @contextmanager
    def trial(self) -> Iterator[_MultiTrial]:
        """Every source's trial block around the agent call."""
        with ExitStack() as stack:
            yield _MultiTrial([(s.name, stack.enter_context(s.trial())) for s in self.sources])


def otel_available() -> bool:
    """True when ``opentelemetry-sdk`` can be imported (the ``otel`` extra)."""
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        return False
    return True


_CURRENT: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "agenteval_trial_spans", default=None
)
_ATTACH_LOCK = threading.Lock()
_MARK = "_agenteval_capture_attached"


def _processor() -> Any:
    from opentelemetry.sdk.trace import SpanProcessor

    class _TrialSpanProcessor(SpanProcessor):
        """Appends each started span to the span list of the trial whose context starts it."""

        def on_start(self, span: Any, parent_context: Any = None) -> None:
            spans = _CURRENT.get()
            if spans is not None:
                spans.append(span)

    return _TrialSpanProcessor()


def _attach() -> bool:
    """Add our processor to the global provider, installing one if none is set."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    return attach_processor(
        lock=_ATTACH_LOCK,
        mark=_MARK,
        current=trace.get_tracer_provider,
        install=trace.set_tracer_provider,
        proxy_type=trace.ProxyTracerProvider,
        new_provider=TracerProvider,
        add="add_span_processor",
        processor=_processor,
    )


class OtelCapture:
    """In-process OpenTelemetry capture (module docstring)."""

    name = "otel"

    def __init__(self) -> None:
        self._attached: bool | None = None
        self._logs: bool | None = None

    @property
    def attached(self) -> bool:
        """Whether the processor is on the global provider (attaches on first use)."""
        if self._attached is None:
            self._attached = _attach()
        return self._attached

    def trial(self) -> AbstractContextManager[SpanListTrial]:
        """Collect the spans started (and the log records emitted) in this context until
        the block ends."""
        if self._logs is None:
            self._logs = attach_logs()
        logs = CURRENT_LOGS if self._logs else None
        return collect_spans(_CURRENT, self.attached, span_record, logs)


def _hex(n: int, width: int) -> str:
    return format(n, f"0{width}x")


def _attributes(span: Any) -> Mapping[str, Any]:
    """A span's attributes as a plain dict: the mapping scans them several times, and the
    SDK's read-only mapping is slow to iterate. An open span's copy is retried, since the
    agent (a timed-out sync agent's thread) may still be writing."""
    if span.end_time is not None:
        return dict(span.attributes or {})
    for _ in range(3):
        try:
            return dict(span.attributes or {})
        except RuntimeError:  # changed while being copied: try again
            continue
    return {}


def span_record(span: Any) -> SpanRecord:
    """A plain :class:`SpanRecord` from an SDK ``ReadableSpan`` (ended or not)."""
    ctx = span.context
    parent = span.parent
    status = span.status
    events = span.events
    code = getattr(getattr(status, "status_code", None), "name", "UNSET")
    return SpanRecord(
        name=span.name,
        span_id=_hex(ctx.span_id, 16) if ctx is not None else "",
        trace_id=_hex(ctx.trace_id, 32) if ctx is not None else "",
        parent_id=_hex(parent.span_id, 16) if parent is not None else None,
        start_ns=span.start_time,
        end_ns=span.end_time,
        attributes=_attributes(span),
        events=tuple(SpanEvent(e.name, e.attributes or {}, e.timestamp) for e in events)
        if events
        else (),
        status=code.lower(),
        status_message=getattr(status, "description", None),
    )
