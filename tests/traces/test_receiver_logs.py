"""The receiver's Logs signal, model time from spans, and failed trials' late spans."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.run.runner import run_one
from agenteval.traces.receiver import OtlpReceiver
from agenteval.traces.receiver_agent import ReceiverAgent
from agenteval.trials.trial import Trial

_S = 1_000_000_000
SHIPPED = "Error: RuntimeError: order beta has already shipped"


def _kv(d: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for k, v in d.items():
        value = {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}
        out.append({"key": k, "value": value})
    return out


def _chat(rec: Recorder, sid: str, start: float, end: float) -> dict[str, Any]:
    """A model span without content (content capture off on the span)."""
    assert rec.trace is not None
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    return {
        "traceId": rec.trace.trace_id,
        "spanId": sid,
        "parentSpanId": rec.trace.span_id,
        "name": "chat m",
        "startTimeUnixNano": str(int(start * _S)),
        "endTimeUnixNano": str(int(end * _S)),
        "attributes": _kv({**attrs, "gen_ai.usage.input_tokens": 3}),
    }


def _details(rec: Recorder, sid: str, inputs: Any, outputs: Any) -> dict[str, Any]:
    """A ``gen_ai.client.inference.operation.details`` log record of span ``sid``."""
    assert rec.trace is not None
    attrs = [
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(inputs)}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(outputs)}},
    ]
    return {
        "eventName": "gen_ai.client.inference.operation.details",
        "traceId": rec.trace.trace_id,
        "spanId": sid,
        "attributes": attrs,
    }


CALL = {"type": "tool_call", "id": "c1", "name": "ship", "arguments": {"order": "beta"}}
ANSWER = {"type": "tool_call_response", "id": "c1", "response": SHIPPED}


class Service:
    """Exports two content-less model spans and their content as log records; the
    adapter's own time (the whole request) is 5 s; ``late`` sends the spans 0.3 s after
    the trial ended (an exporter's batch delay); ``fail`` ends the trial with an HTTP error."""

    def __init__(self, endpoint: str, late: bool = False, fail: bool = False) -> None:
        self.endpoint, self.late, self.fail = endpoint, late, fail

    def describe(self) -> dict[str, Any]:
        return {"kind": "stub"}

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def _post(self, path: str, doc: dict[str, Any]) -> None:
        async with (
            aiohttp.ClientSession() as s,
            s.post(self.endpoint + path, json=doc) as r,
        ):
            assert r.status == 200, await r.text()

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        first = _chat(rec, "a1" * 8, 100.0, 100.2)
        second = _chat(rec, "a2" * 8, 100.3, 100.4)
        user = {"role": "user", "parts": [{"type": "text", "content": "ship beta"}]}
        logs = [
            _details(rec, "a1" * 8, [user], [{"role": "assistant", "parts": [CALL]}]),
            _details(
                rec,
                "a2" * 8,
                [user, {"role": "assistant", "parts": [CALL]}, {"role": "tool", "parts": [ANSWER]}],
                [{"role": "assistant", "parts": [{"type": "text", "content": "It had."}]}],
            ),
        ]
        await self._post("/v1/logs", {"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]})
        doc = {"resourceSpans": [{"scopeSpans": [{"spans": [first, second]}]}]}
        if self.late:  # the exporter's batch goes out after the trial ended
            asyncio.get_running_loop().call_later(
                0.3, lambda: asyncio.ensure_future(self._post("/v1/traces", doc))
            )
        else:
            await self._post("/v1/traces", doc)
        rec.active_s = 5.0  # what an HTTP adapter measures: the whole request
        if self.fail:
            raise AgentFailure("server_error", "HTTP 500")
        return AgentOutput(output="It had.", tool_calls=[])


def _trial(late: bool = False, fail: bool = False, wait_s: float = 3.0) -> Trial:
    async def go() -> Trial:
        receiver = OtlpReceiver("127.0.0.1", 0)
        agent = ReceiverAgent(Service(receiver.endpoint, late, fail), receiver, wait_s)
        await agent.start()
        try:
            return await run_one(agent, Case(id="c", input="ship beta"), 0, None)
        finally:
            await agent.close()

    return asyncio.run(go())


def test_log_records_give_the_calls_and_model_time_wins() -> None:
    t = _trial()
    assert [(c.name, c.arguments, c.error) for c in t.tool_calls] == [
        ("ship", {"order": "beta"}, SHIPPED)
    ]
    assert t.metadata["tool_errors"] == [{"call": 0, "rule": "text", "prefix": "Error:"}]
    assert t.latency.active_s is not None and abs(t.latency.active_s - 0.3) < 1e-6


def test_a_failed_trial_waits_for_its_late_spans() -> None:
    t0 = time.monotonic()
    t = _trial(late=True, fail=True, wait_s=3.0)
    assert t.failure is not None and t.failure.cause == "server_error"
    assert [c.error for c in t.tool_calls] == [SHIPPED]  # the late span's content
    assert time.monotonic() - t0 < 3.0 + 2


def test_logs_route_refuses_bad_bodies_and_takes_protobuf() -> None:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    async def go() -> list[int]:
        receiver = OtlpReceiver("127.0.0.1", 0)
        await receiver.start()
        try:
            url = receiver.endpoint + "/v1/logs"
            req = ExportLogsServiceRequest()
            rec = req.resource_logs.add().scope_logs.add().log_records.add()
            rec.event_name = "gen_ai.choice"
            rec.trace_id = bytes.fromhex("ab" * 16)
            rec.span_id = bytes.fromhex("cd" * 8)
            codes = []
            async with aiohttp.ClientSession() as s:
                for data, ctype in (
                    (b"{not json", "application/json"),
                    (b"x", "text/plain"),
                    (b"\xff\x00garbage", "application/x-protobuf"),
                    (req.SerializeToString(), "application/x-protobuf"),
                    (b'{"resourceLogs": []}', "application/json"),
                ):
                    async with s.post(url, data=data, headers={"Content-Type": ctype}) as r:
                        codes.append(r.status)
            return codes
        finally:
            await receiver.close()

    assert asyncio.run(go()) == [400, 415, 400, 200, 200]


def test_protobuf_log_records_decode_with_ids_and_body() -> None:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    from agenteval.traces.logs import decode_logs_protobuf

    req = ExportLogsServiceRequest()
    rec = req.resource_logs.add().scope_logs.add().log_records.add()
    rec.event_name = "gen_ai.tool.message"
    rec.trace_id = bytes.fromhex("ab" * 16)
    rec.span_id = bytes.fromhex("cd" * 8)
    rec.body.kvlist_value.values.add(key="content").value.string_value = SHIPPED
    (got,) = decode_logs_protobuf(req.SerializeToString())
    assert (got.name, got.trace_id, got.span_id) == ("gen_ai.tool.message", "ab" * 16, "cd" * 8)
    assert got.body == {"content": SHIPPED}
