"""Agent traffic through the real OpenTelemetry SDK exporter, for bench/monitor_ingest.py and
tests/monitor/test_monitor_kill.py.

``python bench/monitor_traffic.py ENDPOINT N [--acked FILE] [--rate R] [--fail-every K]
[--bad-every K] [--blast W]`` sends N agent invocations, each one trace: an ``invoke_agent``
root span with its prompt and answer, a ``chat`` span and an ``execute_tool`` span, exported by
``OTLPSpanExporter`` (OTLP/HTTP protobuf) through a ``BatchSpanProcessor``. Every
``--fail-every`` K-th invocation ends in an error; every ``--bad-every`` K-th answers
"I do not know" (the case expects "42"). With ``--acked FILE``, each span the exporter
got a 200 for is written there as ``TRACE_ID SPAN_ID`` once acknowledged (flushed), so a
test knows what the monitor acknowledged before it was killed. ``--blast W``: the spans
are made first, encoded by the SDK's own OTLP encoder in requests of 512 spans, then posted
by W threads at once (retrying 429/503 after ``Retry-After``): faster than one SDK
exporter can send, to find the monitor's own ceiling.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import IO

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status, StatusCode


class Acked(SpanExporter):
    """The real exporter, noting each span it was answered 200 for."""

    def __init__(self, inner: SpanExporter, out: IO[str] | None) -> None:
        self.inner = inner
        self.out = out

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        got = self.inner.export(spans)
        if got is SpanExportResult.SUCCESS and self.out is not None:
            self.out.write(
                "".join(
                    f"{s.context.trace_id:032x} {s.context.span_id:016x}\n"
                    for s in spans
                    if s.context is not None
                )
            )
            self.out.flush()
        return got

    def shutdown(self) -> None:
        self.inner.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("endpoint")
    ap.add_argument("n", type=int)
    ap.add_argument("--acked")
    ap.add_argument("--rate", type=float, default=0.0, help="invocations per second (0: flat out)")
    ap.add_argument("--fail-every", type=int, default=0)
    ap.add_argument("--bad-every", type=int, default=0)
    ap.add_argument("--service", default="shop")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--blast", type=int, default=0, metavar="W")
    a = ap.parse_args()
    provider = TracerProvider(resource=Resource.create({"service.name": a.service}))
    if a.blast:
        _blast(a, provider)
        return
    out = open(a.acked, "a", encoding="utf-8") if a.acked else None  # noqa: SIM115
    exporter = OTLPSpanExporter(endpoint=a.endpoint + "/v1/traces", timeout=a.timeout)
    provider.add_span_processor(
        BatchSpanProcessor(
            Acked(exporter, out),
            schedule_delay_millis=50,
            max_export_batch_size=512,
            max_queue_size=1 << 20,  # flat out, nothing is dropped before it is sent
        )
    )
    _emit(provider, a)
    provider.shutdown()
    if out is not None:
        out.close()


def _blast(a: argparse.Namespace, provider: TracerProvider) -> None:
    import urllib.error
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    mem = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(mem))
    _emit(provider, a)
    spans = list(mem.get_finished_spans())
    bodies = [
        encode_spans(spans[i : i + 512]).SerializeToString() for i in range(0, len(spans), 512)
    ]
    url = a.endpoint + "/v1/traces"

    def send(body: bytes) -> None:
        while True:
            req = urllib.request.Request(url, body, {"Content-Type": "application/x-protobuf"})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    r.read()
                    return
            except urllib.error.HTTPError as e:
                if e.code not in (429, 503):
                    raise
                time.sleep(float(e.headers.get("Retry-After", "1")))

    with ThreadPoolExecutor(a.blast) as pool:
        list(pool.map(send, bodies))


def _emit(provider: TracerProvider, a: argparse.Namespace) -> None:
    tracer = provider.get_tracer("traffic")
    for i in range(a.n):
        with tracer.start_as_current_span("invoke_agent shop") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("app.case", f"q{i % 5}")
            question = [{"role": "user", "parts": [{"type": "text", "content": f"q{i}"}]}]
            root.set_attribute("gen_ai.input.messages", json.dumps(question))
            with tracer.start_as_current_span("chat scripted") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "scripted")
                chat.set_attribute("gen_ai.usage.input_tokens", 10)
                chat.set_attribute("gen_ai.usage.output_tokens", 5)
            with tracer.start_as_current_span("execute_tool lookup") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "lookup")
                tool.set_attribute("gen_ai.tool.call.id", f"c{i}")
                tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"q": i}))
                tool.set_attribute("gen_ai.tool.call.result", json.dumps({"answer": 42}))
            bad = a.bad_every and i % a.bad_every == 0
            answer = "I do not know" if bad else "The answer is 42"
            reply = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            root.set_attribute("gen_ai.output.messages", json.dumps(reply))
            if a.fail_every and i % a.fail_every == 0:
                root.set_status(Status(StatusCode.ERROR, "boom"))
        if a.rate:
            time.sleep(1.0 / a.rate)


if __name__ == "__main__":
    main()
