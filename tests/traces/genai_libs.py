"""Run a 2-tool + failing-tool agent under a real GenAI instrumentation library.

``python genai_libs.py LIB MODE BASE_URL TRACES_OUT LOGS_OUT`` drives the scripted fake
OpenAI server (``agenteval.testing.fake_openai``) through the real ``openai`` client with
``LIB`` instrumenting it, and writes what the library emitted as OTLP/JSON: one
``ExportTraceServiceRequest`` per line in ``TRACES_OUT``, one ``ExportLogsServiceRequest``
in ``LOGS_OUT`` (when it emitted logs). Also the checked-in recorder of the fixtures in
``fixtures/genai/`` (``record`` below). Run in its own process: instrumentors patch
the client globally. ``python genai_libs.py --capture LIB MODE BASE_URL OUT`` runs it
under agenteval's in-process capture instead and writes what capture saw;
``--export LIB MODE BASE_URL ENDPOINT TRACEPARENT`` exports over OTLP/HTTP to an
agenteval receiver, as an HTTP service would.

The agent (under one span of its own, ``shop-agent``, as an application has): the user
asks for ``find_customer(name="Ada")``, ``list_orders(customer=7)``
and ``ship(order="beta")``; ``ship`` raises, and the loop sends the model the framework
convention ``Error: RuntimeError: order beta has already shipped``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

PROMPT = (
    'Ship Ada\'s order [[call:find_customer {"name": "Ada"}]]'
    ' [[call:list_orders {"customer": 7}]] [[call:ship {"order": "beta"}]]'
)
SHIPPED = "order beta has already shipped"
TOOLS = {
    "find_customer": lambda name: {"id": 7, "name": name},
    "list_orders": lambda customer: ["alpha", "beta"],
}
LIBS = {
    # name: (distribution, env for each mode)
    "openai-v2": (
        "opentelemetry-instrumentation-openai-v2",
        {
            "off": {},
            "events": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
            "span": {
                "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
            },
            "logs": {
                "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY",
            },
        },
    ),
    "openllmetry": (
        "opentelemetry-instrumentation-openai",
        {"on": {"TRACELOOP_TRACE_CONTENT": "true"}, "off": {"TRACELOOP_TRACE_CONTENT": "false"}},
    ),
    "openinference": (
        "openinference-instrumentation-openai",
        {
            "on": {},
            "off": {"OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUTS": "true"},
        },
    ),
}


def _instrument(lib: str) -> None:
    if lib == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    elif lib == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # type: ignore[no-redef]
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor  # type: ignore[no-redef]
    OpenAIInstrumentor().instrument()


def run_agent(base_url: str) -> str:
    """The tool loop (module docstring); returns the answer."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    names = [*TOOLS, "ship"]
    tools: Any = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in names
    ]
    msgs: list[Any] = [{"role": "user", "content": PROMPT}]
    for _ in range(6):
        r = client.chat.completions.create(model="fake-model", messages=msgs, tools=tools)
        m = r.choices[0].message
        if not m.tool_calls:
            return m.content or ""
        msgs.append(m.model_dump(exclude_none=True))
        for tc in m.tool_calls:
            args = json.loads(tc.function.arguments or "{}")
            try:
                if tc.function.name == "ship":
                    raise RuntimeError(SHIPPED)
                out = json.dumps(TOOLS[tc.function.name](**args))
            except Exception as e:  # what frameworks send the model
                out = f"Error: {type(e).__name__}: {e}"
            msgs.append({"role": "tool", "tool_call_id": tc.id, "content": out})
    return ""


def main(lib: str, mode: str, base_url: str, traces_out: str, logs_out: str) -> None:
    os.environ.update(LIBS[lib][1][mode])
    from google.protobuf.json_format import MessageToDict
    from opentelemetry import _logs, trace
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import (
        InMemoryLogRecordExporter,
        SimpleLogRecordProcessor,
    )
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": f"{lib}-{mode}"})
    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(provider)
    logs = InMemoryLogRecordExporter()
    lp = LoggerProvider(resource=resource)
    lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
    _logs.set_logger_provider(lp)
    _instrument(lib)
    with trace.get_tracer("shop").start_as_current_span("shop-agent"):  # the app's own span
        run_agent(base_url)
    with open(traces_out, "w", encoding="utf-8") as f:
        f.write(json.dumps(MessageToDict(encode_spans(spans.get_finished_spans()))) + "\n")
    got = logs.get_finished_logs()
    if got:
        with open(logs_out, "w", encoding="utf-8") as f:
            f.write(json.dumps(MessageToDict(encode_logs(got))) + "\n")


def capture(lib: str, mode: str, base_url: str, out: str) -> None:
    """The in-process path: agenteval's own capture (it installs the tracer and logger
    providers) around the agent; writes the trajectory's calls, usage, metadata."""
    os.environ.update(LIBS[lib][1][mode])
    from agenteval.traces.capture import OtelCapture
    from agenteval.trials.tool_errors import tool_error_list

    cap = OtelCapture()
    _instrument(lib)
    with cap.trial() as t:
        answer = run_agent(base_url)
    traj = t.trajectory()
    doc = {
        "answer": answer,
        "calls": [c.model_dump(mode="json") for c in traj.tool_calls],
        "tool_errors": tool_error_list(traj.tool_calls),
        "usage": [u.model_dump() for u in traj.usage],
        "active_s": traj.active_s,
        "metadata": {k: v for k, v in traj.metadata.items() if k != "model_calls"},
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def export(lib: str, mode: str, base_url: str, endpoint: str, traceparent: str) -> None:
    """The receiver path: the service exports spans and logs over OTLP/HTTP to
    ``endpoint`` (``/v1/traces``, ``/v1/logs``), its agent span a child of the trial's
    ``traceparent`` (what an HTTP service takes from agenteval's request)."""
    os.environ.update(LIBS[lib][1][mode])
    from opentelemetry import _logs, trace
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)
    lp = LoggerProvider()
    lp.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(f"{endpoint}/v1/logs")))
    _logs.set_logger_provider(lp)
    _instrument(lib)
    ctx = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    with trace.get_tracer("shop").start_as_current_span("shop-agent", context=ctx):
        run_agent(base_url)
    provider.force_flush()
    lp.force_flush()


if __name__ == "__main__":
    if sys.argv[1] == "--capture":
        capture(*sys.argv[2:6])
    elif sys.argv[1] == "--export":
        export(*sys.argv[2:7])
    else:
        main(*sys.argv[1:6])
