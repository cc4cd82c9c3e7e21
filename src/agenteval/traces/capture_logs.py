"""In-process capture of the OTel Logs signal: the log records a trial's code emits.

The twin of the span hook in :mod:`agenteval.traces.capture`: a log record processor on
the global ``LoggerProvider`` appends each record emitted in a trial's context to that
trial's list (records are emitted synchronously by the code that logs them, so the
context is the trial's). The records join their spans by span id when the trial's spans
are mapped (:func:`agenteval.traces.logs.attach`): what an instrumentation in "event"
mode (openai-v2's default) records as logs counts like span content.

Attaching (once per process): an SDK provider (anything with
``add_log_record_processor``) gets the processor; when no provider was set at all, an
SDK ``LoggerProvider`` with only that processor is installed — and only then; any other
provider is left alone and no log is captured.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any

from agenteval.traces.logs import LogRecord, plain
from agenteval.traces.otel_global import attach_processor

__all__ = ["CURRENT_LOGS", "attach_logs", "log_record"]

CURRENT_LOGS: contextvars.ContextVar[list[LogRecord] | None] = contextvars.ContextVar(
    "agenteval_trial_logs", default=None
)
_LOCK = threading.Lock()
_MARK = "_agenteval_logs_attached"


def log_record(r: Any) -> LogRecord:
    """A plain :class:`~agenteval.traces.logs.LogRecord` from an SDK log record (or the
    ``ReadWriteLogRecord`` / ``LogData`` wrapping one)."""
    r = getattr(r, "log_record", r)
    attrs = plain(dict(r.attributes or {}))
    name = getattr(r, "event_name", None) or attrs.get("event.name") or ""
    trace_id, span_id = getattr(r, "trace_id", 0), getattr(r, "span_id", 0)
    return LogRecord(
        name=str(name),
        trace_id=format(trace_id, "032x") if trace_id else None,
        span_id=format(span_id, "016x") if span_id else None,
        time_ns=getattr(r, "timestamp", None) or getattr(r, "observed_timestamp", None),
        attributes=attrs,
        body=plain(r.body),
    )


def _processor() -> Any:
    from opentelemetry.sdk._logs import LogRecordProcessor

    class _TrialLogProcessor(LogRecordProcessor):
        """Appends each record to the log list of the trial whose context emits it."""

        def on_emit(self, record: Any) -> None:
            logs = CURRENT_LOGS.get()
            if logs is not None:
                logs.append(log_record(record))

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return _TrialLogProcessor()


def attach_logs() -> bool:
    """Add the processor to the global logger provider, installing one if none is set;
    False when logs cannot be captured (no SDK, or a provider that takes no processor)."""
    try:
        from opentelemetry import _logs
        from opentelemetry._logs._internal import ProxyLoggerProvider
        from opentelemetry.sdk._logs import LoggerProvider
    except ImportError:
        return False
    return attach_processor(
        lock=_LOCK,
        mark=_MARK,
        current=_logs.get_logger_provider,
        install=_logs.set_logger_provider,
        proxy_type=ProxyLoggerProvider,
        new_provider=LoggerProvider,
        add="add_log_record_processor",
        processor=_processor,
    )
