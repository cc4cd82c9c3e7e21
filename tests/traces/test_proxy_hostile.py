"""The recording proxy on hostile traffic (issue 28, cause 9): real servers on 127.0.0.1
(an aiohttp upstream that records what reached it, the proxy in-process or as
``agenteval proxy``). Paths cannot leave the upstream's base; no header value but the
public ones is written; URL credentials and the agent's Authorization do not clash; a
tool result sent in a request still in flight is kept; a gzip stream of many events is
read in bounded memory; ``--out`` is never a run's file; a full disk is exit 5."""

from __future__ import annotations

import asyncio
import base64
import gzip
import http.client
import io
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agenteval.traces.proxy import RecordingProxy
from agenteval.traces.proxy_records import ModelCall
from agenteval.traces.proxy_wire import READ_MAX, ResponseReader

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs_v0_1"


def _chat_reply(tool: bool) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": "ok"}
    if tool:
        msg["tool_calls"] = [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ]
    return {
        "model": "m",
        "choices": [{"index": 0, "message": msg}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }


@asynccontextmanager
async def upstream() -> AsyncIterator[tuple[str, list[dict[str, Any]], asyncio.Event]]:
    """A model API at ``http://127.0.0.1:PORT``: every request is recorded (path, headers,
    body); ``/v1/chat/completions`` answers with a tool call unless the messages already
    hold a tool result, and a request whose body says ``"hang"`` waits for ``release``."""
    seen: list[dict[str, Any]] = []
    release = asyncio.Event()

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append({"path": request.raw_path, "headers": dict(request.headers), "body": body})
        if b"hang" in body:
            await release.wait()
        has_result = b'"role": "tool"' in body or b'"role":"tool"' in body
        return web.json_response(_chat_reply(tool=not has_result))

    app = web.Application()
    app.router.add_route("*", "/{rest:.*}", handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", seen, release
    finally:
        release.set()
        await runner.cleanup()


def _raw(port: int, method: str, path: str, body: bytes = b"", **headers: str) -> tuple[int, bytes]:
    """One request with ``path`` sent exactly as written (no client normalises it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", headers.pop("Host", f"127.0.0.1:{port}"))
        conn.putheader("Content-Length", str(len(body)))
        for k, v in headers.items():
            conn.putheader(k.replace("_", "-"), v)
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


async def _call(
    port: int, method: str, path: str, body: bytes = b"", **h: str
) -> tuple[int, bytes]:
    return await asyncio.to_thread(_raw, port, method, path, body, **h)


@pytest.mark.parametrize(
    "path",
    [
        "/v1/../admin",
        "/v1/%2e%2e/admin",
        "/v1/%2E%2E/admin",
        "/v1/..%2fadmin",
        "/v1/chat/..%2F..%2Fadmin",
        "/v1/%252e%252e/admin",
        "/v1/./../admin",
        "/v1/chat/../../admin",
        "/v1/..%5cadmin",
    ],
)
def test_no_path_reaches_outside_the_upstream_base(path: str) -> None:
    async def go() -> tuple[int, list[dict[str, Any]], int]:
        async with upstream() as (url, seen, _):
            proxy = await RecordingProxy(f"{url}/base/v1", labels=True).start()
            try:
                status, _ = await _call(proxy.port, "GET", path)
                status_t, _ = await _call(proxy.port, "GET", "/t/label" + path)
                ok, _ = await _call(proxy.port, "GET", "/v1/models?x=%2e%2e")
            finally:
                await proxy.close()
            return status, seen, status_t if status_t != status else ok

    status, seen, ok = asyncio.run(go())
    assert status == 400
    assert ok == 200
    assert [s["path"] for s in seen] == ["/base/v1/models?x=%2e%2e"], seen


def test_url_credentials_and_the_agents_authorization_do_not_clash() -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()

    async def go() -> tuple[list[int], list[dict[str, Any]]]:
        async with upstream() as (url, seen, _):
            creds = url.replace("http://", "http://bob:s3cr%2Ft@")
            proxy = await RecordingProxy(f"{creds}/v1", labels=True, out=io.StringIO()).start()
            try:
                path = "/v1/chat/completions"
                ct = "application/json"
                a = await _call(
                    proxy.port,
                    "POST",
                    path,
                    body,
                    Authorization="Bearer AGENTKEY1",
                    Content_Type=ct,
                )
                b = await _call(proxy.port, "POST", path, body, Content_Type=ct)
            finally:
                await proxy.close()
            return [a[0], b[0]], seen

    statuses, seen = asyncio.run(go())
    assert statuses == [200, 200]
    assert seen[0]["headers"]["Authorization"] == "Bearer AGENTKEY1"  # the agent's wins
    basic = base64.b64encode(b"bob:s3cr/t").decode()
    assert seen[1]["headers"]["Authorization"] == f"Basic {basic}"


def test_no_header_value_but_the_public_ones_is_written() -> None:
    secrets = {
        "Cookie": "session=COOKIEVALUE123; theme=dark",
        "Ocp-Apim-Subscription-Key": "SUBSCRIPTIONKEY456",
        "X-Goog-Api-Key": "GOOGLEKEY789xyz",
        "X-Custom-Token": "CUSTOMTOKEN000",
        "Authorization": "Bearer BEARERKEY111",
    }
    quoted = " ".join(secrets.values()) + " COOKIEVALUE123 running python on Linux"
    msgs = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"error: request refused with {quoted}"},
    ]
    body = json.dumps({"model": "m", "messages": msgs}).encode()
    out = io.StringIO()

    async def go() -> None:
        async with upstream() as (url, _, _):
            proxy = await RecordingProxy(f"{url}/v1", labels=True, out=out).start()
            try:
                hdrs = {k.replace("-", "_"): v for k, v in secrets.items()}
                status, _ = await _call(
                    proxy.port, "POST", "/v1/chat/completions", body,
                    Content_Type="application/json", X_Stainless_Lang="python",
                    X_Stainless_Os="Linux", **hdrs,
                )  # fmt: skip
                assert status == 200
            finally:
                await proxy.close()

    asyncio.run(go())
    written = out.getvalue()
    assert written.count("\n") == 1
    for value in [*secrets.values(), "COOKIEVALUE123", "BEARERKEY111"]:
        assert value not in written, value
    assert "running python on Linux" in written  # public header values are left alone


def test_a_tool_result_in_a_request_still_in_flight_is_kept() -> None:
    tool_msg = [
        {"role": "user", "content": "hang"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "RESULT-42"},
    ]

    async def go() -> Any:
        async with upstream() as (url, _, release):
            proxy = await RecordingProxy(f"{url}/v1").start()
            try:
                with proxy.trial() as t:
                    port = proxy.port
                    token = t.base_url.split("/t/")[1].split("/")[0]
                    first = json.dumps({"model": "m", "messages": tool_msg[:1]}).encode()
                    second = json.dumps({"model": "m", "messages": tool_msg}).encode()
                    ct = "application/json"
                    path = f"/t/{token}/v1/chat/completions"
                    await _call(port, "POST", path, first.replace(b"hang", b"hi"), Content_Type=ct)
                    pending = asyncio.ensure_future(
                        _call(port, "POST", path, second, Content_Type=ct)
                    )
                    while len(t.calls) < 2:
                        await asyncio.sleep(0.01)
                    traj = t.trajectory()  # the trial ends now (it failed): the call is in flight
                    release.set()
                    await pending
            finally:
                await proxy.close()
            return traj

    traj = asyncio.run(go())
    (call,) = traj.tool_calls
    assert call.name == "lookup" and call.result == "RESULT-42"


def _sse(events: list[dict[str, Any]]) -> bytes:
    return (
        b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    )


def test_a_gzip_stream_of_many_events_is_read_in_bounded_memory() -> None:
    chunk = {"model": "m", "choices": [{"index": 0, "delta": {"content": "x" * 1000}}]}
    one = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    tool = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "c9", "function": {"name": "look", "arguments": "{}"}}
                    ]
                },
            }
        ]
    }
    last = {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 9}}
    raw = one * 20_000 + _sse([tool, last])  # ~21 MiB of 20,000 events
    packed = gzip.compress(raw, 1)
    reader = ResponseReader("chat", "text/event-stream", "gzip")
    tracemalloc.start()
    try:
        for i in range(0, len(packed), 16384):
            reader.feed(packed[i : i + 16384])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    call = ModelCall(api="chat", path="/chat/completions", started_at=datetime.now(UTC))
    reader.finish(call)
    assert call.unparsed is None
    assert (call.input_tokens, call.output_tokens) == (7, 9)
    assert [c.name for c in call.requested] == ["look"]
    assert peak < 8 << 20, f"peak {peak >> 20} MiB reading a {len(raw) >> 20} MiB stream"


def test_one_32_mib_event_in_small_chunks_is_read_and_a_bigger_one_is_not() -> None:
    args = "a" * (32 << 20)
    ev = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "c1", "function": {"name": "big", "arguments": args}}
                    ]
                },
            }
        ]
    }
    raw = _sse([ev])
    reader = ResponseReader("chat", "text/event-stream", "")
    for i in range(0, len(raw), 65536):
        reader.feed(raw[i : i + 65536])
    call = ModelCall(api="chat", path="/chat/completions", started_at=datetime.now(UTC))
    reader.finish(call)
    assert call.unparsed is None and len(call.requested[0].arguments) == len(args)
    huge = _sse([{"x": "b" * (READ_MAX + 10)}])
    reader = ResponseReader("chat", "text/event-stream", "")
    for i in range(0, len(huge), 1 << 20):
        reader.feed(huge[i : i + (1 << 20)])
    call = ModelCall(api="chat", path="/chat/completions", started_at=datetime.now(UTC))
    reader.finish(call)
    assert call.unparsed is not None and "MiB" in call.unparsed


def test_a_foreign_host_is_421_and_nothing_is_forwarded() -> None:
    async def go() -> tuple[int, list[dict[str, Any]]]:
        async with upstream() as (url, seen, _):
            proxy = await RecordingProxy(f"{url}/v1", labels=True).start()
            try:
                status, _ = await _call(proxy.port, "GET", "/v1/models", Host="evil.example")
            finally:
                await proxy.close()
            return status, seen

    status, seen = asyncio.run(go())
    assert status == 421 and seen == []


@contextmanager
def _proxy_cli(*args: str) -> Iterator[subprocess.Popen[str]]:
    p = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "proxy", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(10)


@pytest.mark.parametrize("name", ["trials.jsonl", "run.json", "cases.jsonl"])
def test_out_onto_a_runs_file_is_refused(cli: Any, tmp_path: Path, name: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "demo_careful", run)
    before = (run / name).read_bytes()
    r = cli("proxy", "http://127.0.0.1:9/v1", "--out", run / name)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("agenteval: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert (run / name).read_bytes() == before


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_exit_5_in_one_line() -> None:
    async def go() -> tuple[int | None, str]:
        async with upstream() as (url, _, _):
            with _proxy_cli(f"{url}/v1", "--out", "/dev/full") as p:
                assert p.stdout is not None
                line = await asyncio.to_thread(p.stdout.readline)
                port = int(line.rsplit(":", 1)[1].split("/")[0])
                body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
                status, _ = await _call(
                    port,
                    "POST",
                    "/v1/chat/completions",
                    body.encode(),
                    Content_Type="application/json",
                )
                assert status == 200  # the call is still forwarded
                code = await asyncio.to_thread(p.wait, 20)
                assert p.stderr is not None
                return code, p.stderr.read()

    code, err = asyncio.run(go())
    lines = [x for x in err.splitlines() if x.startswith("agenteval: error")]
    assert code == 5, err
    assert "Traceback" not in err and len(lines) == 1, err
    assert "No space left on device" in lines[0] and "--resume" not in lines[0]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
            "agenteval proxy: request not read: Invalid character in Content-Length",
        ),
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32)) + b"\x00" * 40,
            "agenteval proxy: request not read: Received HTTPS traffic on an HTTP port",
        ),
    ],
    ids=["content-length", "tls-handshake"],
)
def test_bytes_that_are_not_http_are_a_400_and_one_line_not_a_traceback(
    raw: bytes, said: str, capfd: Any
) -> None:
    told: list[str] = []

    async def main() -> tuple[bytes, int]:
        # the upstream is never reached: the request is refused before any route
        proxy = await RecordingProxy("http://127.0.0.1:9/v1", say=told.append).start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(raw)
            answer = await reader.read(200)
            writer.close()
        finally:
            await proxy.close()
        return answer, proxy.requests_not_read

    answer, counted = asyncio.run(main())
    assert answer.split(b" ")[1] == b"400" and counted == 1
    assert told == [said]
    assert "Traceback" not in capfd.readouterr().err
