"""HttpClient against real servers on 127.0.0.1: retries recorded, causes, waits, secrets."""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from agenteval.llm.http import HttpClient, RetryPolicy, parse_retry_after
from agenteval.llm.recorder import AgentFailure, Recorder
from agenteval.testing import FakeConfig, FakeServer, fake_openai_server

FAST = RetryPolicy(max_retries=3, base_s=0.001, cap_s=0.01, request_timeout_s=2.0)
BODY_MODEL = "m"


def _chat(text: str) -> dict[str, Any]:
    return {"model": BODY_MODEL, "messages": [{"role": "user", "content": text}]}


async def _call(
    srv: FakeServer, text: str, policy: RetryPolicy = FAST, **kw: Any
) -> tuple[Any, Recorder, BaseException | None]:
    rec = Recorder()
    async with HttpClient(policy, rng=random.Random(0), **kw) as client:
        try:
            out = await client.post_json(srv.base_url + "/chat/completions", _chat(text), rec)
        except AgentFailure as e:
            return None, rec, e
    return out, rec, None


def _run(text: str, policy: RetryPolicy = FAST, config: FakeConfig | None = None) -> Any:
    async def go() -> Any:
        async with fake_openai_server(config) as srv:
            out, rec, err = await _call(srv, text, policy)
            return out, rec, err, dict(srv.counts)

    return asyncio.run(go())


@asynccontextmanager
async def serve(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    ("kind", "reason", "cause"),
    [
        ("429", "rate_limit", "rate_limited"),
        ("429_noretry", "rate_limit", "rate_limited"),
        ("500", "server_error", "server_error"),
        ("502", "server_error", "server_error"),
        ("503", "server_error", "server_error"),
        ("reset_before_headers", "connection", "connection"),
        ("reset_after_headers", "connection", "connection"),
    ],
)
def test_persistent_fault_retries_then_fails_with_cause(kind: str, reason: str, cause: str) -> None:
    out, rec, err, counts = _run(f"q [[fault:{kind}]]", config=FakeConfig(retry_after_s=0.001))
    assert out is None
    assert isinstance(err, AgentFailure) and err.cause == cause
    assert [r.reason for r in rec.retries] == [reason] * FAST.max_retries
    assert counts == {kind: FAST.max_retries + 1}  # no hidden retries
    assert "gave up after 3 retries" in err.message
    assert rec.active_s > 0


def test_timeout_is_retried_then_fails_with_timeout() -> None:
    policy = RetryPolicy(max_retries=1, base_s=0.001, request_timeout_s=0.1)
    _, rec, err, counts = _run("[[fault:hang]]", policy)
    assert isinstance(err, AgentFailure) and err.cause == "timeout"
    assert [r.reason for r in rec.retries] == ["timeout"]
    assert counts == {"hang": 2}


@pytest.mark.parametrize(
    "kind", ["500", "429", "reset_before_headers", "reset_after_headers", "hang"]
)
def test_transient_fault_ends_in_success_with_n_retries(kind: str) -> None:
    policy = RetryPolicy(max_retries=4, base_s=0.001, request_timeout_s=0.2)
    out, rec, err, counts = _run(f"q [[fault:{kind}:2]]", policy, FakeConfig(retry_after_s=0.001))
    assert err is None
    assert out["choices"][0]["message"]["content"] == f"echo: q [[fault:{kind}:2]]"
    assert len(rec.retries) == 2
    assert counts == {kind: 2, "ok": 1}


def test_retry_after_is_waited_exactly_and_recorded() -> None:
    policy = RetryPolicy(max_retries=4, base_s=10.0, cap_s=10.0)  # back-off would be huge
    t0 = time.perf_counter()
    out, rec, err, _ = _run("q [[fault:429:3]]", policy, FakeConfig(retry_after_s=0.05))
    elapsed = time.perf_counter() - t0
    assert err is None and out is not None
    assert [(r.reason, r.wait_s) for r in rec.retries] == [("rate_limit", 0.05)] * 3
    assert elapsed >= 0.15  # the waits really happened
    # time inside requests excludes the waits
    assert rec.active_s <= elapsed - 0.15


def test_retry_after_is_capped() -> None:
    policy = RetryPolicy(max_retries=1, base_s=0.001, max_retry_after_s=0.01)
    _, rec, _, _ = _run("q [[fault:429:1]]", policy, FakeConfig(retry_after_s=30))
    assert [r.wait_s for r in rec.retries] == [0.01]


def test_backoff_without_retry_after_is_jittered_within_bounds() -> None:
    policy = RetryPolicy(max_retries=4, base_s=0.002, cap_s=0.005)
    _, rec, _, _ = _run("q [[fault:503:4]]", policy)
    bounds = [0.002, 0.004, 0.005, 0.005]
    assert len(rec.retries) == 4
    for r, bound in zip(rec.retries, bounds, strict=True):
        assert 0 <= r.wait_s <= bound
        assert r.detail is not None and r.detail.startswith("HTTP 503")


@given(st.integers(0, 200), st.integers(0, 2**32))
def test_backoff_bounds_and_seeded_reproducibility(n: int, seed: int) -> None:
    policy = RetryPolicy(base_s=0.5, cap_s=30.0)
    a = policy.backoff_s(n, random.Random(seed))
    assert 0.0 <= a <= min(30.0, 0.5 * 2.0 ** min(n, 60))
    assert a == policy.backoff_s(n, random.Random(seed))


@pytest.mark.parametrize("kind", ["400", "404"])
def test_other_4xx_fail_at_once_as_http_error(kind: str) -> None:
    _, rec, err, counts = _run(f"[[fault:{kind}]]")
    assert isinstance(err, AgentFailure) and err.cause == "http_error"
    assert err.message.startswith(f"HTTP {kind}: ")
    assert rec.retries == [] and counts == {kind: 1}


@pytest.mark.parametrize("kind", ["truncated", "not_json"])
def test_unparseable_body_is_malformed_without_retry(kind: str) -> None:
    _, rec, err, counts = _run(f"[[fault:{kind}]]")
    assert isinstance(err, AgentFailure) and err.cause == "malformed_response"
    assert rec.retries == [] and counts == {kind: 1}


def test_connection_refused_is_retried_as_connection() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: refused

    async def go() -> tuple[Recorder, BaseException | None]:
        rec = Recorder()
        async with HttpClient(FAST) as client:
            try:
                await client.post_json(f"http://127.0.0.1:{port}/x", {}, rec)
            except AgentFailure as e:
                return rec, e
        return rec, None

    rec, err = asyncio.run(go())
    assert isinstance(err, AgentFailure) and err.cause == "connection"
    assert [r.reason for r in rec.retries] == ["connection"] * 3


def test_zero_retries_means_exactly_one_request() -> None:
    policy = RetryPolicy(max_retries=0)
    _, rec, err, counts = _run("[[fault:500]]", policy)
    assert isinstance(err, AgentFailure) and err.cause == "server_error"
    assert "gave up after 0 retries" in err.message
    assert rec.retries == [] and counts == {"500": 1}


def test_secrets_never_appear_in_messages_or_details() -> None:
    key = "sk-test-0123456789abcdef"

    async def echo_auth(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        status = 503 if request.path == "/flaky" else 401
        return web.json_response({"error": f"bad credentials {auth} / {key}"}, status=status)

    async def go() -> list[tuple[Recorder, AgentFailure]]:
        out = []
        async with serve(echo_auth) as url:
            client = HttpClient(FAST, headers={"Authorization": f"Bearer {key}"}, secrets=[key])
            async with client:
                for path in ("/denied", "/flaky"):
                    rec = Recorder()
                    with pytest.raises(AgentFailure) as ei:
                        await client.post_json(url + path, {"q": 1}, rec)
                    out.append((rec, ei.value))
        return out

    (_, e1), (rec2, e2) = asyncio.run(go())
    assert e1.cause == "http_error" and e2.cause == "server_error"
    texts = [e1.message, str(e1), e2.message, str(e2), *(r.detail or "" for r in rec2.retries)]
    assert len(rec2.retries) == 3
    for text in texts:
        assert key not in text
        assert "[REDACTED]" in text


def test_secret_in_header_value_is_redacted_without_explicit_secrets() -> None:
    token = "tok-abcdefgh"

    async def echo(request: web.Request) -> web.Response:
        return web.Response(status=403, text=f"no {request.headers.get('X-API-Key')}")

    async def go() -> AgentFailure:
        async with serve(echo) as url, HttpClient(FAST, headers={"X-API-Key": token}) as c:
            with pytest.raises(AgentFailure) as ei:
                await c.post_json(url, {}, Recorder())
            return ei.value

    err = asyncio.run(go())
    assert token not in err.message and err.message == "HTTP 403: no [REDACTED]"


def test_sends_json_with_configured_headers_and_returns_decoded_json() -> None:
    seen: dict[str, Any] = {}

    async def handler(request: web.Request) -> web.Response:
        seen["body"] = await request.json()
        seen["ct"] = request.headers.get("Content-Type")
        seen["x"] = request.headers.get("X-Custom")
        return web.json_response({"ok": [1, 2]})

    async def go() -> Any:
        async with serve(handler) as url, HttpClient(headers={"X-Custom": "v"}) as c:
            return await c.post_json(url, {"a": "é{}"}, Recorder())

    assert asyncio.run(go()) == {"ok": [1, 2]}
    assert seen == {"body": {"a": "é{}"}, "ct": "application/json", "x": "v"}


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after("0.05") == 0.05
    assert parse_retry_after(" 3 ") == 3.0
    assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now) == 7.0
    assert parse_retry_after(format_datetime(now - timedelta(seconds=7), usegmt=True), now) == 0.0
    for bad in (None, "", "soon", "-1", "nan", "inf"):
        assert parse_retry_after(bad) is None


def test_headers_as_configured_for_speed_and_a_compressed_body_still_decodes() -> None:
    seen: list[dict[str, str | None]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(
            {
                "ua": request.headers.get("User-Agent"),
                "ae": request.headers.get("Accept-Encoding"),
                "cookie": request.headers.get("Cookie"),
            }
        )
        resp = web.json_response({"n": len(seen)})
        resp.set_cookie("session", "abc")  # a cookie jar would send it back
        if len(seen) == 2:
            resp.enable_compression(web.ContentCoding.gzip)  # compressed though not asked
        return resp

    async def go(headers: dict[str, str] | None = None) -> list[Any]:
        async with serve(handler) as url, HttpClient(headers=headers) as c:
            return [await c.post_json(url + "/x", {}, Recorder()) for _ in range(3)]

    assert asyncio.run(go()) == [{"n": 1}, {"n": 2}, {"n": 3}]
    from agenteval._version import __version__

    assert seen == [{"ua": f"agenteval/{__version__}", "ae": None, "cookie": None}] * 3
    seen.clear()
    asyncio.run(go({"User-Agent": "mine/1"}))
    assert {s["ua"] for s in seen} == {"mine/1"}
    seen.clear()
    asyncio.run(go({"user-agent": "mine/2"}))  # any casing replaces ours: one header
    assert {s["ua"] for s in seen} == {"mine/2"}


def test_an_unparseable_url_fails_as_before() -> None:
    async def go() -> BaseException | None:
        async with HttpClient(RetryPolicy(max_retries=0)) as c:
            try:
                await c.post_json("http://[::1", {}, Recorder())
            except AgentFailure as e:
                return e
        return None

    err = asyncio.run(go())
    assert isinstance(err, AgentFailure) and err.cause == "connection"
