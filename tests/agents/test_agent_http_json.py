"""HttpJsonAgent against a small aiohttp service started in the test."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.agents.http_json import HttpJsonAgent, get_path, has_path
from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.llm.http import RetryPolicy

FAST = RetryPolicy(max_retries=2, base_s=0.001, cap_s=0.01, request_timeout_s=2.0)
TOKEN = "svc-token-98765"


class Service:
    """Answers POST /ask; fails the first request of a question containing 'flaky' with 503."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.flaky_seen: set[str] = set()

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"body": body, "token": request.headers.get("X-Token")})
        if request.headers.get("X-Token") != TOKEN:
            return web.json_response(
                {"error": f"bad token {request.headers.get('X-Token')}"}, status=403
            )
        q = body.get("question")
        if isinstance(q, str) and "flaky" in q and q not in self.flaky_seen:
            self.flaky_seen.add(q)
            return web.json_response({"error": "busy"}, status=503)
        if q == "no answer":
            return web.json_response({"data": {}})
        return web.json_response(
            {
                "data": {
                    "answer": f"answer to {json.dumps(q)}",
                    "steps": [
                        {"tool": "search", "args": {"q": "x"}, "out": ["doc1"]},
                        {"tool": "calc", "args": "{oops", "err": "bad input"},
                    ],
                },
                "meta": {"tokens": {"in": 11, "out": 5}, "model": "svc-v2"},
            }
        )


@asynccontextmanager
async def service() -> AsyncIterator[tuple[str, Service]]:
    svc = Service()
    app = web.Application()
    app.router.add_post("/ask", svc.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", svc
    finally:
        await runner.cleanup()


def write_config(tmp_path: Path, base: str, **overrides: Any) -> Path:
    cfg: dict[str, Any] = {
        "url": base + "/ask",
        "headers": {"X-Token": "${SVC_TOKEN}", "X-Client": "agenteval"},
        "body": {"question": "{input}", "case": "{id}", "n": "{n}", "ctx": "ctx: {context}"},
        "response": {
            "output": "data.answer",
            "tool_calls": {
                "path": "data.steps",
                "name": "tool",
                "arguments": "args",
                "result": "out",
                "error": "err",
            },
            "usage": {
                "input_tokens": "meta.tokens.in",
                "output_tokens": "meta.tokens.out",
                "model": "meta.model",
            },
        },
    }
    cfg.update(overrides)
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def run_case(
    tmp_path: Path, case: Case, **overrides: Any
) -> tuple[Any, Recorder, Service, HttpJsonAgent]:
    async def go() -> Any:
        async with service() as (url, svc):
            agent = HttpJsonAgent(
                write_config(tmp_path, url, **overrides), policy=FAST, env={"SVC_TOKEN": TOKEN}
            )
            rec = Recorder()
            await agent.start()
            try:
                out: Any = await agent.run(case, 0, rec)
            except AgentFailure as e:
                out = e
            finally:
                await agent.close()
            return out, rec, svc, agent

    result: tuple[Any, Recorder, Service, HttpJsonAgent] = asyncio.run(go())
    return result


def test_renders_body_reads_output_tool_calls_and_usage(tmp_path: Path) -> None:
    out, rec, svc, _ = run_case(
        tmp_path, Case(id="c9", input="why {braces}?", context="sky", metadata={"n": 3})
    )
    assert isinstance(out, AgentOutput)
    assert out.output == 'answer to "why {braces}?"'
    assert svc.requests == [
        {
            "body": {"question": "why {braces}?", "case": "c9", "n": 3, "ctx": "ctx: sky"},
            "token": TOKEN,
        }
    ]
    assert out.tool_calls is not None
    assert [(c.name, c.arguments, c.result, c.error) for c in out.tool_calls] == [
        ("search", {"q": "x"}, ["doc1"], None),
        ("calc", "{oops", None, "bad input"),
    ]
    assert [(u.model, u.input_tokens, u.output_tokens) for u in rec.usage] == [("svc-v2", 11, 5)]


def test_list_input_is_inserted_as_a_list(tmp_path: Path) -> None:
    convo = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    out, _, svc, _ = run_case(tmp_path, Case(id="c", input=convo, metadata={"n": 1}))
    assert svc.requests[0]["body"]["question"] == convo
    assert isinstance(out, AgentOutput)


def test_server_error_is_retried_and_recorded(tmp_path: Path) -> None:
    out, rec, svc, _ = run_case(tmp_path, Case(id="c", input="flaky one", metadata={"n": 1}))
    assert isinstance(out, AgentOutput) and out.output == 'answer to "flaky one"'
    assert [r.reason for r in rec.retries] == ["server_error"]
    assert len(svc.requests) == 2


def test_missing_output_path_is_malformed(tmp_path: Path) -> None:
    out, _, _, _ = run_case(tmp_path, Case(id="c", input="no answer", metadata={"n": 1}))
    assert isinstance(out, AgentFailure) and out.cause == "malformed_response"
    assert out.message == "response has no 'data.answer'"


def test_token_never_in_describe_or_errors(tmp_path: Path) -> None:
    async def go() -> Any:
        async with service() as (url, _):
            # The service echoes a wrong token in its 403; that token contains the secret.
            path = write_config(tmp_path, url, headers={"X-Token": "${SVC_TOKEN}-x"})
            agent = HttpJsonAgent(path, policy=FAST, env={"SVC_TOKEN": TOKEN})
            async with agent.client:
                with pytest.raises(AgentFailure) as ei:
                    await agent.run(Case(id="c", input="q", metadata={"n": 1}), 0, Recorder())
            return agent, ei.value

    agent, err = asyncio.run(go())
    assert err.cause == "http_error"
    assert TOKEN not in err.message and "[REDACTED]" in err.message
    desc = agent.describe()
    assert TOKEN not in json.dumps(desc)
    assert desc["headers"] == {"X-Token": "[REDACTED]"}  # not on the public-header list
    assert desc["kind"] == "http_json" and desc["response"]["output"] == "data.answer"


def test_literal_secret_header_is_redacted_in_describe(tmp_path: Path) -> None:
    path = write_config(
        tmp_path, "http://127.0.0.1:9", headers={"Authorization": "Bearer literal-secret"}
    )
    desc = HttpJsonAgent(path, env={}).describe()
    assert desc["headers"] == {"Authorization": "[REDACTED]"}


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"url": None}, "url", "required"),
        ({"headers": {"X-Token": "${NOPE}"}}, "headers.X-Token", "NOPE is not set"),
        ({"headers": ["a"]}, "headers", "must map"),
        ({"response": {"tool_calls": "x"}}, "response.output", "dotted path"),
        ({"response": {"output": "a", "extra": 1}}, "response.extra", "unknown key"),
        (
            {"response": {"output": "a", "usage": {"tokens": "x"}}},
            "response.usage.tokens",
            "unknown key",
        ),
        (
            {"response": {"output": "a", "tool_calls": {"name": "n"}}},
            "response.tool_calls",
            "'path'",
        ),
        ({"retries": 3}, "retries", "unknown key"),
        ({"response": "data.answer"}, "response", "required"),
    ],
)
def test_config_errors_name_file_and_field(
    tmp_path: Path, overrides: dict[str, Any], field: str, message: str
) -> None:
    path = write_config(tmp_path, "http://127.0.0.1:9", **overrides)
    with pytest.raises(InputError) as ei:
        HttpJsonAgent(path, env={"SVC_TOKEN": TOKEN})
    assert ei.value.field == field and ei.value.file == str(path)
    assert message in str(ei.value)


def test_unreadable_and_invalid_config_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        HttpJsonAgent(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("url: [unclosed\nbody: {}\n", encoding="utf-8")
    with pytest.raises(InputError) as ei:
        HttpJsonAgent(bad)
    assert ei.value.line is not None and "not valid YAML/JSON" in str(ei.value)
    scalar = tmp_path / "scalar.json"
    scalar.write_text('"just a string"', encoding="utf-8")
    with pytest.raises(InputError, match="must be a mapping"):
        HttpJsonAgent(scalar)


def test_json_config_and_default_body(tmp_path: Path) -> None:
    async def go() -> Any:
        async with service() as (url, svc):
            path = tmp_path / "agent.json"
            path.write_text(
                json.dumps(
                    {
                        "url": url + "/ask",
                        "headers": {"X-Token": TOKEN},
                        "response": {"output": "data.answer"},
                    }
                ),
                encoding="utf-8",
            )
            agent = HttpJsonAgent(path, policy=FAST, env={})
            async with agent.client:
                return await agent.run(Case(id="c", input="q"), 0, Recorder()), svc

    out, svc = asyncio.run(go())
    assert svc.requests[0]["body"] == {"input": "q"}
    assert out.output == "answer to null"  # the default body sends 'input', not 'question'
    assert out.tool_calls == []


def test_get_path() -> None:
    data = {"choices": [{"message": {"content": "hi"}}], "n": None}
    assert get_path(data, "choices.0.message.content") == "hi"
    assert get_path(data, "choices.-1.message.content") == "hi"
    assert has_path(data, "n") and get_path(data, "n") is None
    assert not has_path(data, "choices.1.message")
    assert not has_path(data, "choices.x")
    assert not has_path("text", "a")
