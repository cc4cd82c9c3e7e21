"""The OTLP receiver on hostile requests (issue 28, causes 2 and 8): a real server on
127.0.0.1. zstd bodies are read; ``br`` and unknown encodings, bad times and huge
integers are refused with a 4xx, one logged line and a count, never a 500 or a
traceback; a client trickling its body does not hold the run's end."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import socket
import time
from typing import Any

import pytest
import zstandard
from hostile_traces import T0
from test_receiver import post, serve

from agenteval.llm.propagation import TraceContext
from agenteval.traces.receiver import OtlpReceiver


def _body(ctx: TraceContext, **over: Any) -> bytes:
    span: dict[str, Any] = {
        "traceId": ctx.trace_id,
        "spanId": "1" * 16,
        "name": "invoke_agent a",
        "startTimeUnixNano": str(T0),
        "endTimeUnixNano": str(T0 + 1),
    }
    span.update(over)
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def test_zstd_bodies_are_read_and_other_encodings_refused_in_one_counted_line(
    caplog: Any,
) -> None:
    ctx = TraceContext.new()
    raw = _body(ctx)

    async def go(r: OtlpReceiver) -> Any:
        box = r.expect(ctx)
        js = "application/json"
        got = {
            "zstd": await post(
                r, zstandard.ZstdCompressor().compress(raw), js, **{"Content-Encoding": "zstd"}
            ),
            "gzip": await post(r, gzip.compress(raw), js, **{"Content-Encoding": "gzip"}),
            "br": await post(r, b"\x1b\x00\x00", js, **{"Content-Encoding": "br"}),
            "x-custom": await post(r, raw, js, **{"Content-Encoding": "x-custom"}),
            "bad zstd": await post(r, b"not zstd", js, **{"Content-Encoding": "zstd"}),
            "cut gzip": await post(r, gzip.compress(raw)[:-9], js, **{"Content-Encoding": "gzip"}),
        }
        return box, got

    with caplog.at_level(logging.DEBUG):
        r, logged, (box, got) = serve(go)
    assert got["zstd"][0] == 200 and got["gzip"][0] == 200
    assert len(box.spans) == 2
    assert got["br"][0] == 415 and got["x-custom"][0] == 415
    assert got["bad zstd"][0] == 400 and got["cut gzip"][0] == 400
    assert r.stats.malformed == 4
    assert len(logged) == 4 and all("\n" not in line for line in logged)
    assert "content encoding 'br' is not read: send gzip, deflate, zstd or none" in logged[0]
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR], caplog.text


def test_a_zstd_bomb_is_refused_within_the_bound() -> None:
    bomb = zstandard.ZstdCompressor().compress(b"\0" * (64 << 20))  # 64 MiB from ~2 KiB

    async def go(r: OtlpReceiver) -> Any:
        return await post(r, bomb, "application/json", **{"Content-Encoding": "zstd"})

    r, _, got = serve(go, max_body=1 << 20)
    assert got[0] == 413 and r.stats.malformed == 1


@pytest.mark.parametrize(
    ("over", "why"),
    [
        ({"startTimeUnixNano": "²"}, "must be an integer"),
        ({"startTimeUnixNano": "9" * 5000}, "out of range"),
        ({"startTimeUnixNano": str(10**25)}, "out of range"),
        ({"endTimeUnixNano": -1}, "out of range"),
    ],
)
def test_bad_times_are_a_counted_400_not_a_500(caplog: Any, over: dict[str, Any], why: str) -> None:
    ctx = TraceContext.new()

    async def go(r: OtlpReceiver) -> Any:
        r.expect(ctx)
        return await post(r, _body(ctx, **over), "application/json")

    with caplog.at_level(logging.DEBUG):
        r, logged, got = serve(go)
    assert got[0] == 400, got
    assert r.stats.malformed == 1 and len(logged) == 1 and why in logged[0], logged
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR], caplog.text


def test_a_5000_digit_json_number_is_a_counted_400(caplog: Any) -> None:
    ctx = TraceContext.new()
    body = _body(ctx).replace(b'"name"', b'"x": ' + b"9" * 5000 + b', "name"')

    async def go(r: OtlpReceiver) -> Any:
        return await post(r, body, "application/json")

    with caplog.at_level(logging.DEBUG):
        r, _, got = serve(go)
    assert got[0] == 400 and r.stats.malformed == 1
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR], caplog.text


def test_a_client_trickling_its_body_does_not_hold_the_close() -> None:
    async def main() -> float:
        r = OtlpReceiver("127.0.0.1", 0, log=lambda _: None)
        await r.start()
        sock = socket.create_connection(("127.0.0.1", r.port))
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{"
        )
        await asyncio.sleep(0.3)  # the handler is waiting for the rest of the body
        t0 = time.monotonic()
        await r.close()
        sock.close()
        return time.monotonic() - t0

    took = asyncio.run(main())
    assert took < 20, f"close waited {took:.1f} s for a trickling client (aiohttp's 60 s)"


def test_a_foreign_host_header_is_a_counted_421_and_routes_nothing() -> None:
    ctx = TraceContext.new()
    raw = _body(ctx)

    async def go(r: OtlpReceiver) -> Any:
        box = r.expect(ctx)
        js = "application/json"
        evil = await post(r, raw, js, Host="evil.example")
        local = await post(r, raw, js, Host=f"localhost:{r.port}")
        return box, evil, local

    r, logged, (box, evil, local) = serve(go)
    assert evil[0] == 421 and local[0] == 200
    assert len(box.spans) == 1 and r.stats.malformed == 1
    assert "Host 'evil.example' is not this server" in logged[0]


# the bytes that are not HTTP a receiver meets: a bad Content-Length or chunk size, a TLS
# handshake (an exporter given https:// for this plain-HTTP port), a port scanner's garbage
# with terminal escapes (aiohttp logs a bad first request line at debug level: it was
# answered 400 with no line and no count, the sender's spans vanishing without a word)
_TLS_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32)) + b"\x00" * 40
_NOT_HTTP = {
    "content-length": (
        b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
        "request not read: Invalid character in Content-Length",
    ),
    "chunk-size": (
        b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "request not read: Invalid character in chunk size",
    ),
    "tls-handshake": (_TLS_HELLO, "request not read: Received HTTPS traffic on an HTTP port"),
    "bad-method": (
        b"\x1b[2J\x1b[31mPWNED\x07 /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "request not read:",
    ),
}


@pytest.mark.parametrize(("raw", "said"), list(_NOT_HTTP.values()), ids=list(_NOT_HTTP))
def test_bytes_that_are_not_http_are_a_counted_400_in_one_line(
    raw: bytes, said: str, capfd: Any
) -> None:
    logged: list[str] = []

    async def main() -> tuple[bytes, int]:
        r = OtlpReceiver("127.0.0.1", 0, log=logged.append)
        await r.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", r.port)
        writer.write(raw)
        answer = await reader.read(200)
        writer.close()
        await r.close()
        return answer, r.stats.malformed

    answer, malformed = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400")
    assert malformed == 1
    assert len(logged) == 1 and f"HTTP 400: {said}" in logged[0], logged
    assert all(c == "\n" or 32 <= ord(c) < 127 for c in logged[0])  # no escape reaches a tty
    assert "Traceback" not in capfd.readouterr().err
