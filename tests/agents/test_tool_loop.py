"""The built-in tool loop, end to end against a scripted OpenAI-compatible server.

The server (aiohttp, 127.0.0.1, free port) answers each request from a script chosen by the
case's first user message; the reply is picked by how many assistant turns the request
already holds. Every request body is kept, so the tests can check what the model was sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agenteval.agents.json_tools import (
    MAX_ARGUMENT_CHARS,
    json_reply_schema,
    parse_json_reply,
    tool_listing,
)
from agenteval.agents.tool_loop import ToolLoopAgent
from agenteval.agents.toolset import ToolSet, parse_docstring
from agenteval.cases.case import Case
from agenteval.cli._tool_loop import build_from_args
from agenteval.cli._tool_loop_args import add_arguments
from agenteval.errors import InputError
from agenteval.llm.http import RetryPolicy
from agenteval.run.runner import run_one
from agenteval.scorers import builtin_scorers
from agenteval.scoring.apply import Scorers
from agenteval.trials.trial import Trial

# --- tools --------------------------------------------------------------------------------

WEATHER = {"paris": 21, "oslo": -3}


def get_weather(city: str, unit: str = "C") -> dict[str, Any]:
    """Current temperature of a city.

    Args:
        city: the city's name, e.g. Paris
        unit: C or F
    """
    if city.lower() not in WEATHER:
        raise KeyError(f"no weather for {city}")
    return {"city": city, "temperature": WEATHER[city.lower()], "unit": unit}


async def add(a: int, b: int) -> int:
    """Add two integers.

    :param a: first term
    :param b: second term
    """
    await asyncio.sleep(0)
    return a + b


def explode(reason: str) -> str:
    """A tool that always raises."""
    raise RuntimeError(f"boom: {reason}")


def tools() -> ToolSet:
    return ToolSet.from_functions([get_weather, add, explode])


# --- scripted server ------------------------------------------------------------------------


def call(name: str, arguments: Any, cid: str | None = None) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        out["id"] = cid
    return out


def calls(*items: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(items)}


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "single": [calls(call("get_weather", {"city": "Paris"}, "c1")), answer("21 degrees in Paris")],
    "parallel": [
        calls(call("add", {"a": 1, "b": 2}, "p1"), call("add", {"a": 30, "b": 4}, "p2")),
        answer("3 and 34"),
    ],
    "bad json": [
        calls(call("get_weather", '{"city": "Par', "b1")),
        calls(call("get_weather", {"city": "Paris"}, "b2")),
        answer("21"),
    ],
    "unknown tool": [calls(call("teleport", {"to": "Mars"}, "u1")), answer("cannot teleport")],
    "raises": [calls(call("explode", {"reason": "test"})), answer("the tool failed")],
    "bad args": [calls(call("add", {"a": "one", "b": 2}, "a1")), answer("3")],
    "forever": [calls(call("add", {"a": 1, "b": 1}))] * 20,
    "no tools": [answer("hello")],
    "json mode": [
        {"role": "assistant", "content": "not json at all"},
        {"role": "assistant", "content": '{"tool": "get_weather", "arguments": {"city": "Oslo"}}'},
        {"role": "assistant", "content": '{"answer": "-3 in Oslo"}'},
    ],
}


class Scripted:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        msgs = body["messages"]
        first_user = next(m["content"] for m in msgs if m["role"] == "user")
        script = SCRIPTS[first_user.split(":")[0]]
        turn = sum(1 for m in msgs if m["role"] == "assistant")
        # In a multi-message input, assistant turns given in the input do not count.
        turn -= sum(1 for m in msgs if m.get("name") == "history")
        message = script[min(turn, len(script) - 1)]
        return web.json_response(
            {
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10 + turn, "completion_tokens": 5},
            }
        )


Server = tuple[str, Scripted]


def with_server(test: Callable[[Server], Awaitable[None]]) -> Callable[[], None]:
    """Run an async test with a scripted server on 127.0.0.1 (a free port)."""

    def wrapper() -> None:
        async def main() -> None:
            scripted = Scripted()
            app = web.Application()
            app.router.add_post("/v1/chat/completions", scripted.chat)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            port = runner.addresses[0][1]
            try:
                await test((f"http://127.0.0.1:{port}/v1", scripted))
            finally:
                await runner.cleanup()

        asyncio.run(main())

    wrapper.__name__ = test.__name__
    wrapper.__doc__ = test.__doc__
    return wrapper


SCORERS = Scorers(builtin_scorers())


async def run_case(agent: ToolLoopAgent, case: Case) -> tuple[Trial, dict[str, Any]]:
    await agent.start()
    try:
        trial = await run_one(agent, case, 0, timeout_s=30)
    finally:
        await agent.close()
    scores = {name: s.value for name, s in SCORERS.apply(case, trial).items()}
    return trial, scores


def agent_for(base: str, **kw: Any) -> ToolLoopAgent:
    return ToolLoopAgent(base, "scripted", tools(), policy=RetryPolicy(max_retries=0), **kw)


# --- tests ------------------------------------------------------------------------------------


@with_server
async def test_single_call_recorded_and_scored(server: Server) -> None:
    base, scripted = server
    case = Case(
        id="s",
        input="single: weather in Paris?",
        expected="21 degrees in Paris",
        expected_tools=["get_weather"],
        expected_trajectory=["get_weather"],
    )
    trial, scores = await run_case(agent_for(base), case)
    assert trial.failure is None
    assert trial.output == "21 degrees in Paris"
    [c] = trial.tool_calls
    assert (c.id, c.name, c.arguments, c.error) == ("c1", "get_weather", {"city": "Paris"}, None)
    assert c.result == {"city": "Paris", "temperature": 21, "unit": "C"}
    assert c.started_at is not None and c.duration_s is not None and c.duration_s >= 0
    assert trial.usage[0].model == "scripted"
    assert (trial.usage[0].input_tokens, trial.usage[0].output_tokens) == (10 + 11, 10)
    assert [d["name"] for d in trial.tools or []] == ["get_weather", "add", "explode"]
    roles = [m["role"] for m in trial.messages or []]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert trial.messages is not None and trial.messages[2]["tool_call_id"] == "c1"
    assert json.loads(trial.messages[2]["content"])["temperature"] == 21
    # the definitions went out in OpenAI form on every turn
    sent = scripted.requests[0]["tools"]
    assert sent[0]["type"] == "function" and sent[0]["function"]["name"] == "get_weather"
    props = sent[0]["function"]["parameters"]["properties"]
    assert props["city"] == {"description": "the city's name, e.g. Paris", "type": "string"}
    assert scores["exact_match"] == 1.0
    assert scores["tool_selection"] == 1.0
    assert scores["tool_arguments_valid"] == 1.0
    assert scores["tool_execution"] == 1.0
    assert scores["trajectory_order"] == 1.0
    assert scores["tool_faithfulness"] == 1.0


@with_server
async def test_parallel_calls_run_in_order(server: Server) -> None:
    base, scripted = server
    case = Case(id="p", input="parallel: sums", expected_tools={"add": 2}, max_tool_calls=2)
    trial, scores = await run_case(agent_for(base), case)
    assert [(c.id, c.arguments, c.result) for c in trial.tool_calls] == [
        ("p1", {"a": 1, "b": 2}, 3),
        ("p2", {"a": 30, "b": 4}, 34),
    ]
    assert trial.tool_calls[0].started_at <= trial.tool_calls[1].started_at  # type: ignore[operator]
    tool_msgs = [m for m in scripted.requests[1]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_msgs] == [("p1", "3"), ("p2", "34")]
    assert scores["tool_selection"] == 1.0
    assert scores["step_efficiency"] == 1.0
    assert scores["tool_faithfulness"] == 1.0  # 3 and 34 both came from results


@with_server
async def test_invalid_json_arguments_fed_back_and_recorded_raw(server: Server) -> None:
    base, scripted = server
    case = Case(id="b", input="bad json: weather", expected_tools=["get_weather"])
    trial, scores = await run_case(agent_for(base), case)
    first, second = trial.tool_calls
    assert first.arguments == '{"city": "Par' and first.result is None
    assert first.error is not None and "not valid JSON" in first.error
    assert second.arguments == {"city": "Paris"} and second.error is None
    fed = [m for m in scripted.requests[1]["messages"] if m["role"] == "tool"]
    assert fed[0]["content"].startswith("ERROR: arguments are not valid JSON")
    assert trial.output == "21"
    assert scores["tool_arguments_valid"] == 0.0
    assert scores["tool_execution"] == 1.0  # the invalid call is not an execution failure
    assert scores["redundant_calls"] == 1.0  # retrying a failed call is fine


@with_server
async def test_unknown_tool_is_a_tool_error(server: Server) -> None:
    base, _ = server
    trial, scores = await run_case(agent_for(base), Case(id="u", input="unknown tool: go"))
    [c] = trial.tool_calls
    assert c.name == "teleport" and c.arguments == {"to": "Mars"}
    assert c.error == "unknown tool 'teleport'; available: get_weather, add, explode"
    assert trial.output == "cannot teleport" and trial.failure is None
    assert scores["tool_arguments_valid"] == 0.0


@with_server
async def test_tool_exception_is_recorded_and_fed_back(server: Server) -> None:
    base, scripted = server
    trial, scores = await run_case(agent_for(base), Case(id="r", input="raises: please"))
    [c] = trial.tool_calls
    assert c.id == "call_0_0"  # the model gave no id: one is made up, and used in the reply
    assert c.error == "RuntimeError: boom: test" and c.result is None
    tool_msg = scripted.requests[1]["messages"][-1]
    assert tool_msg == {
        "role": "tool",
        "tool_call_id": "call_0_0",
        "content": "ERROR: RuntimeError: boom: test",
    }
    assert scripted.requests[1]["messages"][-2]["tool_calls"][0]["id"] == "call_0_0"
    assert scores["tool_execution"] == 0.0
    assert scores["tool_arguments_valid"] == 1.0


@with_server
async def test_schema_invalid_arguments_are_not_executed(server: Server) -> None:
    base, _ = server
    trial, scores = await run_case(agent_for(base), Case(id="a", input="bad args: add"))
    [c] = trial.tool_calls
    assert c.error is not None and c.error.startswith("invalid arguments: at $.a:")
    assert scores["tool_arguments_valid"] == 0.0
    assert scores["tool_execution"] is None  # no call with valid arguments to judge


@with_server
async def test_max_turns_fails_but_keeps_calls(server: Server) -> None:
    base, scripted = server
    trial, _ = await run_case(agent_for(base, max_turns=3), Case(id="f", input="forever: loop"))
    assert trial.failure is not None and trial.failure.cause == "max_turns"
    assert "3 model turns" in trial.failure.message
    assert trial.output is None
    assert len(trial.tool_calls) == 3 and all(c.result == 2 for c in trial.tool_calls)
    assert len(scripted.requests) == 3
    assert trial.messages is not None and len(trial.messages) == 1 + 3 * 2


@with_server
async def test_multi_message_input_is_sent_as_is(server: Server) -> None:
    base, scripted = server
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "single: weather in Paris?"},
        {"role": "assistant", "content": "Which unit?", "name": "history"},
        {"role": "user", "content": "Celsius"},
    ]
    trial, _ = await run_case(agent_for(base), Case(id="m", input=history))
    assert scripted.requests[0]["messages"] == history
    assert trial.output == "21 degrees in Paris"
    assert trial.messages is not None and trial.messages[:4] == history


@with_server
async def test_no_tool_call_is_a_direct_answer(server: Server) -> None:
    base, _ = server
    case = Case(id="n", input="no tools: hi", expected_tools=["add"])
    trial, scores = await run_case(agent_for(base, system_prompt="You are terse."), case)
    assert trial.output == "hello" and trial.tool_calls == []
    assert scores["tool_selection"] == 0.0  # answering from memory fails selection
    assert trial.messages is not None and trial.messages[0]["role"] == "system"


@with_server
async def test_json_tool_format(server: Server) -> None:
    base, scripted = server
    agent = agent_for(base, tool_format="json", params={"temperature": 0})
    trial, _ = await run_case(agent, Case(id="j", input="json mode: Oslo?"))
    assert trial.output == "-3 in Oslo"
    [c] = trial.tool_calls
    assert (c.name, c.arguments, c.result["temperature"]) == ("get_weather", {"city": "Oslo"}, -3)
    first = scripted.requests[0]
    assert "tools" not in first and first["temperature"] == 0
    schema = first["response_format"]["json_schema"]["schema"]
    assert schema == json_reply_schema(tools().definitions())
    assert (
        first["messages"][0]["role"] == "system"
        and "get_weather" in first["messages"][0]["content"]
    )
    # the unparseable reply got a reminder, and the result came back as a user message
    second = scripted.requests[1]["messages"]
    assert second[-1]["role"] == "user" and "required format" in second[-1]["content"]
    third = scripted.requests[2]["messages"]
    assert third[-1]["content"].startswith("Result of get_weather: ")


def test_json_format_helpers() -> None:
    defs = tools().definitions()
    assert tool_listing(defs).splitlines()[0] == (
        "- get_weather(city: string, unit?: string): Current temperature of a city."
    )
    schema = json_reply_schema(defs)
    first = schema["anyOf"][0]["properties"]
    assert first["tool"] == {"const": "get_weather"}
    assert first["arguments"]["properties"]["city"]["maxLength"] == MAX_ARGUMENT_CHARS
    assert "maxLength" not in defs[0]["parameters"]["properties"]["city"]  # copy, not edit
    assert json_reply_schema([]) == schema["anyOf"][-1]
    assert parse_json_reply('{"tool": "add", "arguments": {"a": 1}}') == ("tool", "add", {"a": 1})
    assert parse_json_reply('{"answer": 42}') == ("answer", "42", None)
    assert parse_json_reply('{"tool": "add", "arguments": {"a": 1') is None
    assert parse_json_reply("") is None


@with_server
async def test_answer_on_last_turn(server: Server) -> None:
    base, scripted = server
    agent = agent_for(base, max_turns=2, answer_on_last_turn=True)
    trial, _ = await run_case(agent, Case(id="f", input="forever: loop"))
    assert "tool_choice" not in scripted.requests[0]
    assert scripted.requests[1]["tool_choice"] == "none"
    # the scripted model ignores tool_choice and calls again: the loop still stops
    assert trial.failure is not None and trial.failure.cause == "max_turns"
    assert len(trial.tool_calls) == 2


# --- tool sets and the command line -------------------------------------------------------------


def test_docstring_parsing() -> None:
    desc, params = parse_docstring(
        """Find things.

        Longer text.

        Args:
            query (str): what to look for,
                over two lines
            limit: how many
        Returns:
            hits
        """
    )
    assert desc == "Find things. Longer text."
    assert params == {"query": "what to look for, over two lines", "limit": "how many"}


def test_schema_from_hints() -> None:
    [weather, plus, _] = tools().definitions()
    assert weather["description"] == "Current temperature of a city."
    assert weather["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "the city's name, e.g. Paris"},
            "unit": {"type": "string", "default": "C", "description": "C or F"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert plus["parameters"]["properties"]["a"] == {"type": "integer", "description": "first term"}


def test_varargs_refused() -> None:
    def bad(*items: int) -> int:
        return 0

    with pytest.raises(InputError, match=r"\*args"):
        ToolSet.from_functions([bad])


def test_duplicate_names_refused() -> None:
    with pytest.raises(InputError, match="two tools are named 'add'"):
        ToolSet.from_functions([add, add])


def test_from_module_file_and_tools_list(tmp_path: Path) -> None:
    mod = tmp_path / "my_tools.py"
    mod.write_text(
        "from os.path import join\n"
        "def public(x: int) -> int:\n    '''Double.'''\n    return 2 * x\n"
        "def _private() -> None:\n    pass\n"
    )
    assert ToolSet.from_module(str(mod)).names() == ["public"]  # imported `join` is not a tool
    listed = tmp_path / "listed.py"
    listed.write_text("def a() -> int:\n    return 1\ndef b() -> int:\n    return 2\nTOOLS = [b]\n")
    assert ToolSet.from_module(str(listed)).names() == ["b"]
    with pytest.raises(InputError, match=r"cannot import module .no_such_module_xyz."):
        ToolSet.from_module("no_such_module_xyz")


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    for flag in ("--endpoint", "--model", "--prompt-template"):
        p.add_argument(flag)
    p.add_argument("--api-key-env", default="OPENAI_API_KEY")
    p.add_argument("--param", action="append", default=[])
    p.add_argument("--concurrency", type=int, default=4)
    add_arguments(p.add_argument_group("tool loop"))
    return p.parse_args(argv)


def test_build_from_args(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = tmp_path / "cli_tools.py"
    mod.write_text("def ping(host: str) -> str:\n    '''Ping.'''\n    return 'pong'\n")
    monkeypatch.setenv("MY_KEY", "sk-secret-value-123")
    args = _parse(
        [
            "--endpoint=http://127.0.0.1:1/v1",
            "--model=m",
            f"--tools={mod}",
            "--max-turns=4",
            "--param=temperature=0",
            "--api-key-env=MY_KEY",
            "--mcp=python server.py --flag",
        ]
    )
    agent = build_from_args(args, RetryPolicy())
    desc = agent.describe()
    assert desc["kind"] == "tool_loop" and desc["tools"] == ["ping"] and desc["max_turns"] == 4
    assert desc["params"] == {"temperature": 0}
    assert desc["mcp"] == [{"command": ["python", "server.py", "--flag"]}]
    assert "sk-secret-value-123" not in json.dumps(desc)
    with pytest.raises(InputError, match="needs tools"):
        build_from_args(_parse(["--endpoint=http://x/v1", "--model=m"]), RetryPolicy())
    with pytest.raises(InputError, match="needs --endpoint"):
        build_from_args(_parse([f"--tools={mod}"]), RetryPolicy())
