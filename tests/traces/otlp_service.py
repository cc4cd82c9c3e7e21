"""An agent service in another process, for the OTLP receiver tests (not a test module).

``python otlp_service.py`` serves on a free loopback port and prints ``port N`` once it
listens. Two endpoints run the same scripted agent (look a customer up, count the orders,
answer), with OpenTelemetry GenAI spans (``invoke_agent`` → ``chat`` / ``execute_tool``)
under the ``traceparent`` each request carries (extracted with the OTel propagator):

- ``POST /ask`` ``{"question": ..., "id": ...}`` → ``{"answer": ...}``;
- ``POST /v1/chat/completions`` (OpenAI-compatible) → a chat completion with usage.

Environment: ``AGENT_OTLP`` the receiver's base URL; ``AGENT_EXPORT`` ``protobuf`` (the
official OTLP/HTTP exporter, default), ``json-hex`` or ``json-b64`` (OTLP/JSON posted by
hand, ids in hex or base64); ``AGENT_BATCH_MS`` the BatchSpanProcessor delay (100);
``AGENT_LATE_S`` how long spans of a ``late-*`` case are held back after the answer (1.0);
``AGENT_SLOW_S`` how long a ``slow-*`` case takes to answer (1.5).

Cases by id (or question) prefix: ``late-`` spans exported ``AGENT_LATE_S`` after the
answer; ``slow-`` a slow answer; ``orphan-`` one more span in a trace of its own (not the
trial's); a customer the service does not know makes ``find_customer`` raise.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import threading
import urllib.request
from collections.abc import Sequence
from typing import Any

from aiohttp import web
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

CUSTOMERS = {"Ada": 7, "Grace": 8, "Alan": 9, "Edsger": 10, "Barbara": 11, "Donald": 12}
TOOLS = [
    {"name": "find_customer", "parameters": {"type": "object", "properties": {"name": {}}}},
    {"name": "count_orders", "parameters": {"type": "object", "properties": {"customer_id": {}}}},
]
DELAYED: set[int] = set()  # trace ids whose spans are held back (late-* cases)


class JsonExporter(SpanExporter):
    """OTLP/JSON over HTTP, ids in hex (the OTLP/JSON spec) or base64 (protobuf JSON)."""

    def __init__(self, url: str, hex_ids: bool) -> None:
        self.url = url
        self.hex_ids = hex_ids

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        doc = MessageToDict(encode_spans(spans))  # bytes ids come out base64
        if self.hex_ids:
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        for key in ("traceId", "spanId", "parentSpanId"):
                            if key in s:
                                s[key] = base64.b64decode(s[key]).hex()
        req = urllib.request.Request(
            self.url, json.dumps(doc).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200 and json.loads(resp.read()) == {}
        return SpanExportResult.SUCCESS


class Delaying(SpanExporter):
    """Holds back the spans of DELAYED traces for AGENT_LATE_S seconds."""

    def __init__(self, inner: SpanExporter, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        held = [s for s in spans if s.context and s.context.trace_id in DELAYED]
        now = [s for s in spans if s not in held]
        if held:
            threading.Timer(self.delay_s, self.inner.export, (held,)).start()
        return self.inner.export(now) if now else SpanExportResult.SUCCESS


def make_tracer() -> trace.Tracer:
    url = os.environ["AGENT_OTLP"] + "/v1/traces"
    mode = os.environ.get("AGENT_EXPORT", "protobuf")
    if mode == "protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter: SpanExporter = OTLPSpanExporter(endpoint=url)
    else:
        exporter = JsonExporter(url, hex_ids=mode == "json-hex")
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    delayed = Delaying(exporter, float(os.environ.get("AGENT_LATE_S", "1.0")))
    batch_ms = int(os.environ.get("AGENT_BATCH_MS", "100"))
    provider.add_span_processor(BatchSpanProcessor(delayed, schedule_delay_millis=batch_ms))
    return provider.get_tracer("shop-agent")


TRACER = make_tracer()


async def chat(turn: int) -> None:
    with TRACER.start_as_current_span("chat scripted") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", "scripted")
        span.set_attribute("gen_ai.usage.input_tokens", 100 + turn)
        span.set_attribute("gen_ai.usage.output_tokens", 10)
        span.set_attribute("gen_ai.tool.definitions", json.dumps(TOOLS))
        await asyncio.sleep(0.001 * turn)  # interleave concurrent requests


async def tool(name: str, call_id: str, arguments: dict[str, Any]) -> Any:
    with TRACER.start_as_current_span(f"execute_tool {name}") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", name)
        span.set_attribute("gen_ai.tool.call.id", call_id)
        span.set_attribute("gen_ai.tool.call.arguments", json.dumps(arguments))
        await asyncio.sleep(0.001)
        if name == "find_customer":
            if arguments["name"] not in CUSTOMERS:
                raise LookupError(f"no customer named {arguments['name']}")
            result: Any = {"id": CUSTOMERS[arguments["name"]], "name": arguments["name"]}
        else:
            result = arguments["customer_id"] * 3
        span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
        return result


async def agent(question: str, tag: str, headers: Any) -> str:
    """The scripted agent, in the trace the request's traceparent names."""
    ctx = propagate.extract(headers)
    with TRACER.start_as_current_span("invoke_agent shop", context=ctx) as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        if tag.startswith("late-"):
            DELAYED.add(root.get_span_context().trace_id)
        if tag.startswith("orphan-"):  # a span in a trace of its own: never this trial's
            TRACER.start_span("background job", context=otel_context.Context()).end()
        name = question.split()[-1].rstrip("?")
        await chat(1)
        try:
            customer = await tool("find_customer", "call_1", {"name": name})
        except LookupError:
            await chat(2)
            return f"I could not find {name}."
        await chat(2)
        orders = await tool("count_orders", "call_2", {"customer_id": customer["id"]})
        await chat(3)
    if tag.startswith("slow-"):
        await asyncio.sleep(float(os.environ.get("AGENT_SLOW_S", "1.5")))
    return f"{name} has {orders} orders"


async def ask(request: web.Request) -> web.Response:
    body = await request.json()
    answer = await agent(body["question"], str(body.get("id", "")), request.headers)
    return web.json_response({"answer": answer})


async def chat_completions(request: web.Request) -> web.Response:
    body = await request.json()
    question = body["messages"][-1]["content"]
    answer = await agent(question, question, request.headers)
    return web.json_response(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 999, "completion_tokens": 99, "total_tokens": 1098},
        }
    )


async def main() -> None:
    app = web.Application()
    app.router.add_post("/ask", ask)
    app.router.add_post("/v1/chat/completions", chat_completions)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"port {port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
