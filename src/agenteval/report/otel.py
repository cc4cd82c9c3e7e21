"""A run → OpenTelemetry traces (``agenteval export-otel``), one trace per trial.

Spans are made with the OpenTelemetry SDK and handed to a span exporter: the official
OTLP/HTTP one (:func:`otlp_http_sink`), or :class:`OtlpJsonFile`, which writes each
trial's spans as one OTLP/JSON ``ExportTraceServiceRequest`` line (the official encoder,
``encode_spans``, with hex ids: what the Collector's file exporter writes and
``import-traces`` reads). Needs the ``otel`` extra.

Each trial is one trace (OTel GenAI semantic conventions):

- an ``invoke_agent {agent}`` root span (kind INTERNAL) from ``trial.started_at`` to
  ``latency.total_s`` later, with ``gen_ai.operation.name = invoke_agent``,
  ``gen_ai.agent.name``, ``gen_ai.input.messages`` (the case input),
  ``gen_ai.output.messages`` (the answer; left out when there is none),
  ``gen_ai.tool.definitions`` (the tools offered), ``agenteval.case.id``,
  ``agenteval.repeat``, ``agenteval.run.id`` and, for a conversation or a stateful case,
  ``agenteval.trial.json`` (JSON text: the trial's ``conversation``, ``state`` and
  ``state_error``, which ``import-traces`` restores; not named ``*metadata``, which
  Phoenix and other OpenInference backends parse and flatten); a failed trial has status ERROR with
  ``"<cause>: <message>"`` and ``error.type = <cause>``;
- one ``chat {model}`` child span per model of ``trial.usage`` with
  ``gen_ai.request.model``, ``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` and
  ``output_tokens``, placed one after another from the trial's start, together lasting
  ``latency.active_s`` (zero length when it is unknown); one ``chat`` span without a model
  when there is no usage but ``active_s`` is known;
- one ``execute_tool {name}`` child span per tool call, from its ``started_at`` (else the
  trial's start) for ``duration_s`` (else 0), with ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``
  (JSON text); a call that raised has status ERROR with its error text and no result;
- each score as a ``gen_ai.evaluation.result`` event on the root span at its end:
  ``gen_ai.evaluation.name`` (the scorer), ``gen_ai.evaluation.score.value`` (left out
  when None), ``gen_ai.evaluation.score.label`` (the status: passed, failed,
  not_applicable, inconclusive, error) and ``gen_ai.evaluation.explanation`` (the reason).

Trace and span ids are derived from the run id, case id and repeat, so exporting a run
twice gives the same file, and a backend sees the same traces, not copies. The resource has
``service.name`` (``agenteval`` unless given) and ``agenteval.run.id``. Everything comes
from the run as stored, where secrets were already removed when it was recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agenteval._util.nanos import checked_ns, ns_of
from agenteval.cases.case import Case
from agenteval.errors import EXIT_IO, AgentEvalError, FieldName, InputError
from agenteval.rundir import CASES, iter_trials, read_header
from agenteval.rundir.trials import TrialRecord

__all__ = ["ExportError", "ExportStats", "OtlpJsonFile", "export_run", "otlp_http_sink"]


class ExportError(AgentEvalError):
    """The receiver did not accept the traces (exit 5)."""

    exit_code = EXIT_IO


@dataclass(slots=True)
class ExportStats:
    """What was exported."""

    traces: int = 0
    spans: int = 0


TRIAL_METADATA = "agenteval.trial.json"
"""Root span attribute: the trial metadata the scorers need and spans cannot express."""
ROUND_TRIP_METADATA = ("conversation", "state", "state_error")


class _BadTime(ValueError):
    """A trial time OTLP cannot hold: ``field`` and why."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"field '{field}': {why}")


def _ns(t: datetime, field: str = "started_at") -> int:
    """``t`` as OTLP nanoseconds (:mod:`agenteval._util.nanos`); _BadTime out of range."""
    try:
        return ns_of(t)
    except ValueError as e:
        raise _BadTime(field, f"{t.isoformat()} is {e}") from None


def _after(start: int, seconds: float | None, field: str) -> int:
    """``start`` plus ``seconds`` (None: 0), checked to stay within OTLP's range."""
    try:
        return checked_ns(start + int((seconds or 0) * 1e9))
    except (ValueError, OverflowError) as e:
        raise _BadTime(field, f"{seconds} s from the start is {e}") from None


def _json(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, default=str)


def _messages(case: Case | None) -> list[dict[str, Any]]:
    if case is None:
        return []
    if isinstance(case.input, str):
        return [{"role": "user", "parts": [{"type": "text", "content": case.input}]}]
    out = []
    for m in case.input:
        content = m.get("content")
        text = content if isinstance(content, str) else _json(content)
        out.append({"role": m.get("role"), "parts": [{"type": "text", "content": text}]})
    return out


def _ids() -> Any:
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class Ids(IdGenerator):
        """Ids from a key and a counter: the same trial gives the same ids."""

        def __init__(self) -> None:
            self.seed = b""
            self.n = 0

        def start(self, key: str) -> None:
            self.seed = hashlib.sha256(key.encode("utf-8")).digest()
            self.n = 0

        def _next(self, size: int) -> int:
            self.n += 1
            d = hashlib.sha256(self.seed + self.n.to_bytes(4, "big")).digest()
            return int.from_bytes(d[:size], "big") or 1

        def generate_trace_id(self) -> int:
            return self._next(16)

        def generate_span_id(self) -> int:
            return self._next(8)

    return Ids()


def _collector() -> Any:
    from opentelemetry.sdk.trace import SpanProcessor

    class Collect(SpanProcessor):
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def on_end(self, span: Any) -> None:
            self.spans.append(span)

    return Collect()


class OtlpJsonFile:
    """A span exporter writing each batch as one OTLP/JSON line (hex ids) to an open file."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        # imported on first use, so that importing this module stays light
        from agenteval.traces.otlp import request_to_json

        doc = request_to_json(encode_spans(spans))
        self.fh.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def otlp_http_sink(endpoint: str, timeout_s: float = 10.0) -> Any:
    """The official OTLP/HTTP (protobuf) span exporter for ``endpoint``; a URL without a
    path gets ``/v1/traces``. Headers come from ``OTEL_EXPORTER_OTLP_HEADERS`` as usual."""
    from urllib.parse import urlsplit

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # not echoed: text before an '@' may be a password, and only scheme:// URLs are
        # scrubbed of them
        raise InputError(
            (FieldName("otlp_endpoint"), " must be an http:// or https:// URL with a host")
        )
    if parts.path in ("", "/"):
        endpoint = endpoint.rstrip("/") + "/v1/traces"
    return OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s)


def _cases(run_dir: Path) -> dict[str, Case]:
    # imported on first use, so that importing this module stays light
    from agenteval.dataset import iter_cases

    path = run_dir / CASES
    if not path.exists():
        return {}
    return {c.id: c for c in iter_cases(path)}


def _trial_spans(
    tracer: Any, trial: TrialRecord, case: Case | None, agent: str, run_id: str
) -> None:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    start_dt = trial.started_at or datetime.now(UTC)
    start = _ns(start_dt)
    calls = trial.tool_calls
    ends = [_after(start, trial.latency.total_s, "latency.total_s")]
    for i, c in enumerate(calls):
        c_start = _ns(c.started_at, f"tool_calls[{i}].started_at") if c.started_at else start
        ends.append(_after(c_start, c.duration_s, f"tool_calls[{i}].duration_s"))
    _after(start, trial.latency.active_s, "latency.active_s")
    end = max(ends)
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "agenteval.run.id": run_id,
        "agenteval.case.id": trial.case_id,
        "agenteval.repeat": trial.repeat,
    }
    kept = {k: trial.metadata[k] for k in ROUND_TRIP_METADATA if k in trial.metadata}
    if kept:  # what the conversation scorers read: the turns, the final state
        attrs[TRIAL_METADATA] = _json(kept)
    msgs = _messages(case)
    if msgs:
        attrs["gen_ai.input.messages"] = _json(msgs)
    if trial.output is not None:
        out = [{"role": "assistant", "parts": [{"type": "text", "content": trial.output}]}]
        attrs["gen_ai.output.messages"] = _json(out)
    if trial.tools:
        attrs["gen_ai.tool.definitions"] = _json([{"type": "function", **t} for t in trial.tools])
    root = tracer.start_span(
        f"invoke_agent {agent}", kind=SpanKind.INTERNAL, attributes=attrs, start_time=start
    )
    ctx = trace.set_span_in_context(root)
    usage = trial.usage
    active = trial.latency.active_s
    models: list[tuple[str | None, int, int]] = [
        (u.model, u.input_tokens, u.output_tokens) for u in usage
    ]
    if not models and active is not None:
        models = [(None, -1, -1)]
    step = int((active or 0) * 1e9 / len(models)) if models else 0
    t = start
    for model, tin, tout in models:
        a: dict[str, Any] = {"gen_ai.operation.name": "chat"}
        if model:
            a["gen_ai.request.model"] = model
            a["gen_ai.response.model"] = model
        if tin >= 0:
            a["gen_ai.usage.input_tokens"] = tin
            a["gen_ai.usage.output_tokens"] = tout
        span = tracer.start_span(
            f"chat {model}" if model else "chat",
            context=ctx,
            kind=SpanKind.CLIENT,
            attributes=a,
            start_time=t,
        )
        span.end(end_time=t + step)
        t += step
    for c in calls:
        c_start = _ns(c.started_at) if c.started_at else start
        a = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": c.name}
        if c.id:
            a["gen_ai.tool.call.id"] = c.id
        a["gen_ai.tool.call.arguments"] = (
            c.arguments if isinstance(c.arguments, str) else _json(c.arguments)
        )
        if c.error is None:
            a["gen_ai.tool.call.result"] = _json(c.result)
        span = tracer.start_span(
            f"execute_tool {c.name}",
            context=ctx,
            kind=SpanKind.INTERNAL,
            attributes=a,
            start_time=c_start,
        )
        if c.error is not None:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, c.error))
        span.end(end_time=c_start + int((c.duration_s or 0) * 1e9))
    for name, s in trial.scores.items():
        ev: dict[str, Any] = {
            "gen_ai.evaluation.name": name,
            "gen_ai.evaluation.score.label": s.status,
            "gen_ai.evaluation.explanation": s.reason,
        }
        if s.value is not None:
            ev["gen_ai.evaluation.score.value"] = float(s.value)
        root.add_event("gen_ai.evaluation.result", attributes=ev, timestamp=end)
    if trial.failure is not None:
        root.set_attribute("error.type", trial.failure.cause)
        msg = f"{trial.failure.cause}: {trial.failure.message}".rstrip(": ")
        root.set_status(Status(StatusCode.ERROR, msg))
    root.end(end_time=end)


def export_run(
    run_dir: str | os.PathLike[str], sink: Any, *, service_name: str = "agenteval"
) -> ExportStats:
    """Export every trial of the run to ``sink`` (a span exporter), one batch per trial.

    Raises :class:`ExportError` at the first batch the sink does not accept (after the
    sink's own retries), saying how many traces went before."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExportResult

    d = Path(run_dir)
    header = read_header(d)
    cases = _cases(d)
    agent_desc = header.agent or {}
    agent = str(agent_desc.get("name") or agent_desc.get("type") or "agent")
    ids = _ids()
    collect = _collector()
    provider = TracerProvider(
        # not Resource.create: its detectors add a random service.instance.id
        resource=Resource(
            {
                "service.name": service_name,
                "agenteval.run.id": header.run_id,
                "telemetry.sdk.name": "opentelemetry",
                "telemetry.sdk.language": "python",
            }
        ),
        id_generator=ids,
    )
    provider.add_span_processor(collect)
    tracer = provider.get_tracer("agenteval.export")
    stats = ExportStats()
    for trial in iter_trials(d):
        ids.start(f"{header.run_id}\0{trial.case_id}\0{trial.repeat}")
        collect.spans.clear()
        try:
            _trial_spans(tracer, trial, cases.get(trial.case_id), agent, header.run_id)
        except _BadTime as e:
            sink.shutdown()
            raise InputError(
                f"the trial of case '{trial.case_id}' repeat {trial.repeat} cannot be"
                f" exported as OTLP: {e}; stopped after {stats.traces} traces"
            ) from None
        result = sink.export(list(collect.spans))
        if result != SpanExportResult.SUCCESS:
            sink.shutdown()
            raise ExportError(
                f"the receiver did not accept the trace of case '{trial.case_id}' repeat"
                f" {trial.repeat} (unreachable, or it answered with an error); stopped after"
                f" {stats.traces} traces"
            )
        stats.traces += 1
        stats.spans += len(collect.spans)
    sink.shutdown()
    return stats
