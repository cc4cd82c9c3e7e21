"""The OTLP/HTTP receiver's contract: status codes, encodings, routing, the wait."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agenteval.llm.propagation import TraceContext
from agenteval.traces.receiver import OtlpReceiver, parse_address
from agenteval.traces.records import SpanRecord

pytest.importorskip("opentelemetry.proto")


def otlp_json(ctx: TraceContext, span_id: str, parent: str | None, name: str = "s") -> bytes:
    span: dict[str, Any] = {
        "traceId": ctx.trace_id,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
    }
    if parent:
        span["parentSpanId"] = parent
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def otlp_protobuf(ctx: TraceContext, span_id: str, parent: str | None) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    req = ExportTraceServiceRequest()
    s = req.resource_spans.add().scope_spans.add().spans.add()
    s.trace_id = bytes.fromhex(ctx.trace_id)
    s.span_id = bytes.fromhex(span_id)
    if parent:
        s.parent_span_id = bytes.fromhex(parent)
    s.name = "execute_tool lookup"
    return req.SerializeToString()


async def post(
    receiver: OtlpReceiver, body: bytes, ctype: str, **headers: str
) -> tuple[int, bytes, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            receiver.traces_url, data=body, headers={"Content-Type": ctype, **headers}
        ) as resp,
    ):
        return resp.status, await resp.read(), resp.content_type


def serve(coro_fn: Any, **kw: Any) -> tuple[OtlpReceiver, list[str], Any]:
    logged: list[str] = []

    async def main() -> Any:
        receiver = OtlpReceiver("127.0.0.1", 0, log=logged.append, **kw)
        await receiver.start()
        try:
            return receiver, await coro_fn(receiver)
        finally:
            await receiver.close()

    receiver, result = asyncio.run(main())
    return receiver, logged, result


def test_protobuf_and_json_get_an_empty_response_and_reach_their_trial() -> None:
    ctx, other = TraceContext.new(), TraceContext.new()

    async def go(r: OtlpReceiver) -> Any:
        box = r.expect(ctx)
        pb = await post(r, otlp_protobuf(ctx, "1" * 16, ctx.span_id), "application/x-protobuf")
        js = await post(r, otlp_json(ctx, "2" * 16, "1" * 16), "application/json")
        gz = gzip.compress(otlp_json(ctx, "3" * 16, "1" * 16))
        gzipped = await post(r, gz, "application/json", **{"Content-Encoding": "gzip"})
        unknown = await post(r, otlp_json(other, "4" * 16, None), "application/json")
        return box, pb, js, gzipped, unknown

    r, logged, (box, pb, js, gzipped, unknown) = serve(go)
    assert pb == (200, b"", "application/x-protobuf")  # an empty ExportTraceServiceResponse
    assert js == (200, b"{}", "application/json")
    assert gzipped[0] == unknown[0] == 200
    assert [s.span_id for s in box.spans] == ["1" * 16, "2" * 16, "3" * 16]
    assert box.root_seen  # the child of the trial's own span id
    assert (r.stats.spans, r.stats.unknown, r.stats.late, r.stats.malformed) == (3, 1, 0, 0)
    assert logged == []


def test_bad_requests_get_400_413_415_one_line_each_and_the_receiver_goes_on() -> None:
    ctx = TraceContext.new()

    async def go(r: OtlpReceiver) -> Any:
        box = r.expect(ctx)
        codes = [
            (await post(r, b"{not json", "application/json"))[0],
            (await post(r, b'{"resourceSpans": 3}', "application/json"))[0],
            (await post(r, b"\xff\xff\xff", "application/x-protobuf"))[0],
            (await post(r, b"x" * 3000, "application/json"))[0],
            (await post(r, b"hello", "text/plain"))[0],
            (await post(r, otlp_json(ctx, "1" * 16, None), "application/json"))[0],
            (await post(r, b"hello", "text/plain"))[0],  # the 6th: counted, not logged
        ]
        return box, codes

    r, logged, (box, codes) = serve(go, max_body=2000)
    assert codes == [400, 400, 400, 413, 415, 200, 415]
    assert len(box.spans) == 1 and r.stats.malformed == 6
    assert len(logged) == 5 and all("\n" not in line for line in logged)
    assert logged[1] == (
        "agenteval: OTLP receiver: HTTP 400: OTLP request body: field 'resourceSpans':"
        " must be a list"
    )
    assert logged[4].endswith("(further refusals are only counted)")
    assert "HTTP 413" in logged[3] and "HTTP 415" in logged[4] and "text/plain" in logged[4]


def test_protobuf_without_opentelemetry_proto_is_415(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agenteval.traces.receiver.protobuf_available", lambda: False)
    ctx = TraceContext.new()

    async def go(r: OtlpReceiver) -> Any:
        return await post(r, otlp_protobuf(ctx, "1" * 16, None), "application/x-protobuf")

    r, logged, (status, body, _) = serve(go)
    assert status == 415 and b"pip install -e '.[otel]'" in body
    assert not r.protobuf and len(logged) == 1


def test_late_spans_of_a_released_trial_are_counted_not_routed() -> None:
    ctx = TraceContext.new()

    async def go(r: OtlpReceiver) -> Any:
        box = r.expect(ctx)
        r.release(ctx)
        await post(r, otlp_json(ctx, "1" * 16, None), "application/json")
        return box

    r, _, box = serve(go)
    assert box.spans == [] and (r.stats.late, r.stats.unknown, r.stats.spans) == (1, 0, 0)


def span(ctx: TraceContext, parent: str | None) -> SpanRecord:
    return SpanRecord("s", "1" * 16, ctx.trace_id, parent)


def test_the_wait_ends_once_the_root_span_is_in_and_all_is_quiet() -> None:
    async def go() -> tuple[float, float, float]:
        r = OtlpReceiver("127.0.0.1", 0)
        r._sock.close()
        done = r.expect(TraceContext.new())
        done.add(span(done.context, done.context.span_id))  # the agent's root: ended
        t0 = time.monotonic()
        await done.settle(10.0, quiet_s=0.05)
        quick = time.monotonic() - t0

        late = r.expect(TraceContext.new())
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, late.add, span(late.context, "9" * 16))  # a child first
        loop.call_later(0.3, late.add, span(late.context, late.context.span_id))
        t0 = time.monotonic()
        await late.settle(10.0, quiet_s=0.05)
        waited = time.monotonic() - t0

        none = r.expect(TraceContext.new())  # no root ever: the whole wait, no more
        t0 = time.monotonic()
        await none.settle(0.3, quiet_s=0.05)
        return quick, waited, time.monotonic() - t0

    quick, waited, full = asyncio.run(go())
    assert quick < 0.2
    assert 0.3 <= waited < 1.5
    assert 0.3 <= full < 1.0


def test_parse_address() -> None:
    assert parse_address("auto") == ("127.0.0.1", 0)
    assert parse_address("0.0.0.0:4318") == ("0.0.0.0", 4318)
    assert parse_address(":4318") == ("127.0.0.1", 4318)
    assert parse_address("[::1]:4318") == ("::1", 4318)
    for bad in ("4318", "host:", "host:99999", "host:x"):
        with pytest.raises(Exception, match="otlp_receiver must be HOST:PORT"):
            parse_address(bad)


def _dataset(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "hi"}\n')
    (tmp_path / "agent.yaml").write_text(
        "url: http://127.0.0.1:9/ask\nresponse: {output: answer}\n"
    )


def test_port_in_use_is_exit_2_with_one_line(tmp_path: Path, cli: Any) -> None:
    _dataset(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = cli(
            "run", "cases.jsonl", "--http-config", "agent.yaml", "--otlp-receiver",
            f"127.0.0.1:{port}", "--out", "runs/r", cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"agenteval: error: field '--otlp-receiver': cannot listen on 127.0.0.1:{port}"
        " (Address already in use)"
    ]
    assert not (tmp_path / "runs/r").exists()


def test_python_agent_with_a_receiver_is_exit_2(tmp_path: Path, cli: Any) -> None:
    _dataset(tmp_path)
    (tmp_path / "a.py").write_text("def f(case):\n    return 'x'\n")
    proc = cli(
        "run", "cases.jsonl", "--agent", "a.py:f", "--otlp-receiver", "auto",
        "--out", "runs/r", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--otlp-receiver needs an HTTP agent" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


_NO_PROTO = """
import sys
sys.modules["opentelemetry.proto.collector.trace.v1.trace_service_pb2"] = None
from agenteval.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_non_loopback_and_missing_protobuf_each_warn_in_one_line(tmp_path: Path) -> None:
    _dataset(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", _NO_PROTO, "run", "cases.jsonl", "--http-config",
         "agent.yaml", "--otlp-receiver", "0.0.0.0:0", "--max-retries", "0",
         "--out", "runs/r", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    lines = proc.stderr.splitlines()
    assert (
        "agenteval: warning: the OTLP receiver listens on 0.0.0.0, not loopback: anyone who"
        " can reach it can send spans into this run"
    ) in lines
    assert (
        "agenteval: warning: the OTLP receiver takes only OTLP/JSON: protobuf needs"
        " opentelemetry-proto: pip install -e '.[otel]'"
    ) in lines
    assert "Traceback" not in proc.stderr


def test_json_nested_too_deeply_is_400_and_the_receiver_goes_on() -> None:
    ctx = TraceContext.new()
    deep = b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"

    async def go(r: OtlpReceiver) -> Any:
        box = r.expect(ctx)
        codes = [
            (await post(r, deep, "application/json"))[0],
            (await post(r, otlp_json(ctx, "1" * 16, None), "application/json"))[0],
        ]
        return box, codes

    r, logged, (box, codes) = serve(go)
    assert codes == [400, 200]
    assert len(box.spans) == 1 and r.stats.malformed == 1
    assert logged == [
        "agenteval: OTLP receiver: HTTP 400: OTLP request body: not JSON (nested too deeply)"
    ]
