"""The recording proxy as an HTTP server: what is forwarded, what is refused, streaming."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

from agenteval.testing import fake_openai_server
from agenteval.traces.proxy import RecordingProxy, model_base_url

KEY = "sk-server-test-abcdef0123456789"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"


def run(coro: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(coro(), 30))


def test_unknown_or_finished_token_is_refused_and_nothing_is_forwarded() -> None:
    async def main() -> None:
        async with fake_openai_server() as up, aiohttp.ClientSession() as http:
            proxy = await RecordingProxy(up.base_url).start()
            try:
                with proxy.trial() as t:
                    url = t.base_url
                    assert model_base_url() == url
                    async with http.get(f"{url}/models") as r:
                        assert r.status == 200
                assert model_base_url() is None
                for bad in (url, proxy.base_url("guessed"), f"{proxy.url}/v1"):
                    async with http.post(f"{bad}/chat/completions", json={}) as r:
                        assert r.status == 404
                        err = (await r.json())["error"]
                        assert err["message"].startswith("agenteval proxy: ")
                assert sum(up.counts.values()) == 0  # /models is not counted; nothing else came
            finally:
                await proxy.close()

    run(main)


def test_tokens_are_distinct_and_unguessable() -> None:
    proxy = RecordingProxy("http://127.0.0.1:9/v1")
    with proxy.trial() as a, proxy.trial() as b:
        assert a.base_url != b.base_url
        token = a.base_url.split("/t/")[1].split("/")[0]
        assert len(token) >= 32


def test_other_paths_pass_through_byte_for_byte() -> None:
    async def main() -> None:
        async with fake_openai_server() as up, aiohttp.ClientSession() as http:
            proxy = await RecordingProxy(up.base_url).start()
            try:
                async with http.get(f"{up.base_url}/models") as r:
                    direct = (r.status, await r.read())
                with proxy.trial() as t:
                    async with http.get(f"{t.base_url}/models") as r:
                        assert (r.status, await r.read()) == direct
                    assert t.trajectory().metadata == {}  # not a model call
            finally:
                await proxy.close()

    run(main)


def test_headers_body_and_status_forwarded_unchanged_compressed_body_still_read() -> None:
    """Upstream echoes what it got; its gzip body reaches the client still compressed."""
    got: dict[str, Any] = {}
    completion = {
        "model": "m-1",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                }
            }
        ],
        "usage": {
            "prompt_tokens": 7,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 5},
        },
    }
    packed = gzip.compress(json.dumps(completion).encode())

    async def handler(request: web.Request) -> web.Response:
        got["headers"] = dict(request.headers)
        got["body"] = await request.read()
        got["query"] = request.query_string
        return web.Response(
            status=201,
            body=packed,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip", "X-Up": "1"},
        )

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner, base = await _serve(app)
        proxy = await RecordingProxy(base).start()
        body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
        headers = {"Authorization": f"Bearer {KEY}", "X-Custom": "yes", "Connection": "keep-alive"}
        try:
            async with aiohttp.ClientSession(auto_decompress=False) as http:
                with proxy.trial() as t:
                    async with http.post(
                        f"{t.base_url}/chat/completions?api-version=1", data=body, headers=headers
                    ) as r:
                        assert (r.status, r.headers["X-Up"]) == (201, "1")
                        assert r.headers["Content-Encoding"] == "gzip"
                        assert await r.read() == packed
                    traj = t.trajectory()
        finally:
            await proxy.close()
            await runner.cleanup()
        assert got["body"] == body and got["query"] == "api-version=1"
        assert got["headers"]["Authorization"] == f"Bearer {KEY}"
        assert got["headers"]["X-Custom"] == "yes"
        assert "Connection" not in got["headers"] or got["headers"]["Connection"] != "keep-alive"
        assert [(c.name, c.id) for c in traj.tool_calls] == [("f", "c1")]
        assert [(u.model, u.input_tokens, u.output_tokens) for u in traj.usage] == [("m-1", 7, 3)]
        assert traj.token_details == {"m-1": {"cache_read.input_tokens": 5}}

    run(main)


def test_a_stream_is_forwarded_as_it_arrives_not_buffered() -> None:
    """Upstream sends one event, then waits until the client has it: a buffering proxy
    would deadlock (and the test time out)."""
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        chunk = {"model": "m", "choices": [{"index": 0, "delta": {"content": "one"}}]}
        await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await asyncio.wait_for(release.wait(), 10)
        last = {"model": "m", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}}
        await resp.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
        await resp.write_eof()
        return resp

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner, base = await _serve(app)
        proxy = await RecordingProxy(base).start()
        try:
            async with aiohttp.ClientSession() as http:
                with proxy.trial() as t:
                    body = {"model": "m", "stream": True, "messages": []}
                    async with http.post(f"{t.base_url}/chat/completions", json=body) as r:
                        first = await r.content.readuntil(b"\n\n")
                        assert b'"one"' in first
                        assert t.trajectory().usage == []  # still in flight
                        release.set()
                        rest = await r.read()
                    assert rest.endswith(b"data: [DONE]\n\n")
                    traj = t.trajectory()
        finally:
            await proxy.close()
            await runner.cleanup()
        assert [(u.model, u.input_tokens, u.output_tokens) for u in traj.usage] == [("m", 1, 2)]
        assert traj.metadata["model_calls"][0]["stream"] is True

    run(main)


def test_key_header_values_are_removed_from_what_is_recorded() -> None:
    """A key sent as ``api-key`` (Azure) that an agent also echoes into a tool output."""

    async def main() -> None:
        async with fake_openai_server() as up, aiohttp.ClientSession() as http:
            proxy = await RecordingProxy(up.base_url).start()
            fn = {"name": "f", "arguments": "{}"}
            said = {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
            }
            answer = {"role": "tool", "tool_call_id": "c1", "content": f"my key is {KEY}"}
            user = {"role": "user", "content": "[[call:f]]"}
            body = {"model": "m", "messages": [user, said, answer]}
            try:
                with proxy.trial() as t:
                    async with http.post(
                        f"{t.base_url}/chat/completions", json=body, headers={"api-key": KEY}
                    ) as r:
                        assert r.status == 200
                    (call,) = t.calls
            finally:
                await proxy.close()
        assert call.outputs[0].content == "my key is [REDACTED]"

    run(main)


def test_only_a_failure_of_the_last_request_is_the_trials_cause() -> None:
    from agenteval.llm.recorder import AgentFailure
    from agenteval.traces.proxy_records import ModelCall

    proxy = RecordingProxy("http://127.0.0.1:9/v1")
    for calls, cause in (
        ([("unreachable", 0.1)], "connection"),
        ([("unreachable", 0.1), (None, 0.1)], None),  # the client retried and got through
        ([("unreachable", 0.1), (None, None)], "connection"),  # the retry is still in flight
    ):
        try:
            with proxy.trial() as t:
                for error, latency in calls:
                    mc = ModelCall(api="chat", path="/chat/completions", started_at=T0)
                    mc.error, mc.latency_s = error, latency
                    t.calls.append(mc)
                raise ValueError("the agent gave up")
        except AgentFailure as e:
            assert (e.cause, e.message) == (cause, "unreachable (the agent then raised ValueError)")
        except ValueError:
            assert cause is None


_ODD_JSON = [
    b'{"choices": 5, "output": 5, "usage": 5}',
    b'{"choices": [{"message": {"tool_calls": 5}}]}',
    b'{"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": 1}}]}}]}',
    b'{"output": [{"type": "function_call", "name": "f", "arguments": 3}]}',
    b'{"messages": 5, "tools": 5, "input": 5}',
    b'{"messages": [{"role": "tool", "tool_call_id": 5, "content": 7}],'
    b' "tools": [5, {"type": "function"}]}',
    b'{"tools": [{"type": "function", "function": {"name": 5}}]}',
    b'{"tools": [{"type": "function", "function": {"name": "f", "parameters": 5}}]}',
    b'{"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": 5}}}]}',
    b'{"input": [{"type": "function_call_output", "call_id": [], "output": {}}]}',
    b'{"stream": true, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
]


def test_odd_json_requests_and_responses_are_forwarded_unchanged() -> None:
    """Valid JSON of the wrong shape, or nested deeper than the parser goes, in either
    direction: forwarded byte for byte, whatever the proxy can read of it."""

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.query.get("sse"):
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            await resp.write(b"data: " + body + b"\n\ndata: [DONE]\n\n")
            await resp.write_eof()
            return resp
        return web.Response(body=body, headers={"Content-Type": "application/json"})

    async def main() -> None:
        app = web.Application(client_max_size=1 << 24)
        app.router.add_post("/v1/{api:.*}", handler)
        runner, base = await _serve(app)
        proxy = await RecordingProxy(base).start()
        try:
            async with aiohttp.ClientSession() as http:
                for api in ("chat/completions", "responses"):
                    for q in ("", "?sse=1"):
                        for body in _ODD_JSON:
                            with proxy.trial() as t:
                                async with http.post(f"{t.base_url}/{api}{q}", data=body) as r:
                                    assert r.status == 200, (api, q, body[:80])
                                    got = await r.read()
                                t.trajectory()
                            assert body in got, (api, q, body[:80])
                            assert [c.latency_s is not None for c in t.calls] == [True]
        finally:
            await proxy.close()
            await runner.cleanup()

    run(main)


def test_a_huge_response_is_forwarded_whole_but_read_only_up_to_a_limit() -> None:
    """A gzip body that inflates to 512 MiB (a hostile or broken upstream): the client gets
    the compressed bytes unchanged; the proxy, which decodes only to read, stops reading
    at its limit instead of holding the whole inflated body in memory."""
    import tracemalloc
    import zlib

    co = zlib.compressobj(6, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    packed = b"".join([co.compress(block) for _ in range(512)] + [co.flush()])

    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(
            body=packed, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
        )

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner, base = await _serve(app)
        proxy = await RecordingProxy(base).start()
        tracemalloc.start()
        try:
            async with aiohttp.ClientSession(auto_decompress=False) as http:
                with proxy.trial() as t:
                    async with http.post(f"{t.base_url}/chat/completions", data=b"{}") as r:
                        assert r.status == 200 and await r.read() == packed
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            await proxy.close()
            await runner.cleanup()
        assert peak < 200 << 20, f"peak {peak >> 20} MiB"
        (call,) = t.calls
        assert call.status == 200 and call.unparsed is not None
        assert "not read" in call.unparsed

    run(main)
