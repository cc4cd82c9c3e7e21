"""PythonAgent: loading module:function targets and normalising what they return."""

from __future__ import annotations

import asyncio
import itertools
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case
from agenteval.errors import InputError

_counter = itertools.count()
CASE = Case(id="c1", input="What is 2+2?")


def make_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, fn: str = "agent"
) -> PythonAgent:
    """Write a module into a fresh cwd and load ``module:fn`` from it (cwd is importable)."""
    name = f"user_agent_{next(_counter)}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return PythonAgent(f"{name}:{fn}")


def run(agent: PythonAgent, case: Case = CASE, repeat: int = 0) -> tuple[AgentOutput, Recorder]:
    rec = Recorder()

    async def go() -> AgentOutput:
        await agent.start()
        try:
            return await agent.run(case, repeat, rec)
        finally:
            await agent.close()

    return asyncio.run(go()), rec


def test_sync_function_returning_str_runs_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        import threading
        def agent(case):
            return f"{case.id}:{case.input}:{threading.get_ident()}"
        """,
    )
    out, _ = run(agent)
    assert out.output is not None
    cid, text, ident = out.output.split(":")
    assert (cid, text) == ("c1", "What is 2+2?")
    assert int(ident) != threading.get_ident()
    assert agent.describe() == {"kind": "python", "target": agent.target}


def test_async_function_is_awaited_and_gets_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        import asyncio
        async def agent(case, repeat):
            await asyncio.sleep(0)
            return f"r{repeat}"
        """,
    )
    assert run(agent, repeat=3)[0].output == "r3"


def test_keyword_only_repeat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = make_agent(
        tmp_path, monkeypatch, "def agent(case, *, repeat=0):\n    return str(repeat)\n"
    )
    assert run(agent, repeat=2)[0].output == "2"


def test_none_and_number_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = make_agent(
        tmp_path, monkeypatch, "def a(case):\n    return None\ndef b(case):\n    return 42\n", "a"
    )
    assert run(agent)[0].output is None
    other = PythonAgent(agent.target.replace(":a", ":b"))
    assert run(other)[0].output == "42"


def test_dict_result_with_tool_calls_usage_and_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        def agent(case):
            return {
                "output": "4",
                "tool_calls": [{"name": "calc", "arguments": '{"expr": "2+2"}', "result": 4},
                               {"name": "calc", "arguments": "{broken"}],
                "usage": {"model": "tiny", "input_tokens": 3, "output_tokens": 1},
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"name": "calc", "parameters": {"type": "object"}}],
                "metadata": {"k": "v"},
            }
        """,
    )
    out, rec = run(agent)
    assert out.output == "4"
    assert out.tool_calls is not None
    assert [c.arguments for c in out.tool_calls] == [{"expr": "2+2"}, "{broken"]
    assert out.tool_calls[0].result == 4
    assert [(u.model, u.input_tokens, u.output_tokens) for u in rec.usage] == [("tiny", 3, 1)]
    assert out.metadata == {"k": "v"} and out.messages == [{"role": "user", "content": "hi"}]
    assert out.tools == [{"name": "calc", "parameters": {"type": "object"}}]


def test_trial_and_agent_output_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        from agenteval.trials.trial import Trial, ToolCall, Usage
        from agenteval.agents.base import AgentOutput
        def trial(case):
            return Trial(case_id=case.id, output="t", tool_calls=[ToolCall(name="s", arguments={})],
                         usage=[Usage(model="m", input_tokens=1, output_tokens=2)])
        def direct(case):
            return AgentOutput(output="d", metadata={"x": 1})
        """,
        "trial",
    )
    out, rec = run(agent)
    assert out.output == "t" and out.tool_calls is not None and out.tool_calls[0].name == "s"
    assert rec.usage[0].output_tokens == 2
    direct = PythonAgent(agent.target.replace(":trial", ":direct"))
    assert run(direct)[0] == AgentOutput(output="d", metadata={"x": 1})


def test_exceptions_propagate_and_agent_failure_passes_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        from agenteval.llm.recorder import AgentFailure
        def boom(case):
            raise ValueError("kaput")
        async def refused(case):
            raise AgentFailure("http_error", "HTTP 403")
        def failed(case):
            return {"output": None, "failure": {"cause": "timeout", "message": "slow"}}
        """,
        "boom",
    )
    with pytest.raises(ValueError, match="kaput"):
        run(agent)
    with pytest.raises(AgentFailure) as ei:
        run(PythonAgent(agent.target.replace(":boom", ":refused")))
    assert ei.value.cause == "http_error"
    with pytest.raises(AgentFailure) as ei:
        run(PythonAgent(agent.target.replace(":boom", ":failed")))
    assert (ei.value.cause, ei.value.message) == ("timeout", "slow")


def test_unsupported_results_raise_type_error_naming_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        "def a(case):\n    return ['x']\ndef b(case):\n    return {'answer': 'x'}\n",
        "a",
    )
    with pytest.raises(TypeError, match=r"returned list"):
        run(agent)
    with pytest.raises(TypeError, match=r"unknown key\(s\) answer"):
        run(PythonAgent(agent.target.replace(":a", ":b")))


def test_load_errors_are_input_errors_naming_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        "VALUE = 3\ndef noargs():\n    return 'x'\ndef ok(case):\n    return 'x'\n",
        "ok",
    )
    mod = agent.target.split(":")[0]
    cases = {
        "no_such_module_xyz:fn": "cannot import module 'no_such_module_xyz'",
        f"{mod}:missing": "has no attribute 'missing'",
        f"{mod}:VALUE": "is not callable",
        f"{mod}:noargs": "must take the case",
        "justamodule": "must look like package.module:function",
    }
    for target, message in cases.items():
        with pytest.raises(InputError) as ei:
            PythonAgent(target)
        assert target in str(ei.value) and message in str(ei.value)


def test_module_raising_on_import_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InputError, match="raised RuntimeError: nope"):
        make_agent(tmp_path, monkeypatch, "raise RuntimeError('nope')\n")


def test_many_concurrent_async_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        import asyncio
        async def agent(case):
            await asyncio.sleep(0.01)
            return case.id
        """,
    )

    async def go() -> list[Any]:
        cases = [Case(id=str(i), input="x") for i in range(200)]
        outs = await asyncio.gather(*(agent.run(c, 0, Recorder()) for c in cases))
        return [o.output for o in outs]

    assert asyncio.run(go()) == [str(i) for i in range(200)]


def test_sync_calls_use_one_thread_per_call_in_flight_and_reuse_free_ones() -> None:
    from agenteval.agents.python import AgentThreads

    idents: list[int] = []
    gate = threading.Barrier(4, timeout=5)

    def together() -> int:
        gate.wait()  # all four must run at the same time: four threads
        return threading.get_ident()

    def alone() -> int:
        return threading.get_ident()

    async def go() -> None:
        pool = AgentThreads()
        idents.extend(await asyncio.gather(*(pool.call(together) for _ in range(4))))
        assert pool.threads == 4
        for _ in range(20):  # one at a time: a free thread is reused, none is added
            idents.append(await pool.call(alone))
        assert pool.threads == 4
        pool.close()

    asyncio.run(go())
    assert len(set(idents[:4])) == 4
    assert set(idents[4:]) <= set(idents[:4])


def test_a_hung_sync_call_delays_no_other_call() -> None:
    from agenteval.agents.python import AgentThreads

    release = threading.Event()

    async def go() -> list[str]:
        pool = AgentThreads()
        hung = pool.call(release.wait)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(hung), 0.05)
        hung.cancel()  # abandoned: its thread runs on
        done = await asyncio.wait_for(
            asyncio.gather(*(pool.call(lambda i=i: f"ok{i}") for i in range(5))), 2
        )
        release.set()
        pool.close()
        return list(done)

    assert asyncio.run(go()) == [f"ok{i}" for i in range(5)]


def test_base_exceptions_from_a_sync_agent_reach_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        import sys
        def agent(case):
            sys.exit(7)
        """,
    )
    with pytest.raises(SystemExit):
        run(agent)


def test_each_call_gets_a_deep_copy_of_the_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(
        tmp_path,
        monkeypatch,
        """
        def agent(case):
            case.input.append({"role": "user", "content": "more"})
            case.input[0]["content"] = "changed"
            case.must_not_contain.clear()
            case.metadata["deep"]["list"].append(2)
            return str(len(case.input) + len(case.metadata["deep"]["list"]))
        """,
    )
    case = Case(
        id="c",
        input=[{"role": "user", "content": "hi"}],
        must_not_contain=["x"],
        metadata={"deep": {"list": [1]}},
    )
    assert [run(agent, case)[0].output for _ in range(3)] == ["4", "4", "4"]
    assert case.input == [{"role": "user", "content": "hi"}] and case.must_not_contain == ["x"]
    assert case.metadata == {"deep": {"list": [1]}}


def test_a_failure_result_keeps_its_tool_calls_and_messages() -> None:
    from agenteval.agents.python import normalize_result

    rec = Recorder()
    with pytest.raises(AgentFailure) as info:
        normalize_result(
            {
                "failure": {"cause": "max_turns", "message": "10 turns"},
                "tool_calls": [{"name": "search", "arguments": {"q": "a"}}],
                "messages": [{"role": "user", "content": "hi"}],
                "usage": {"model": "m", "input_tokens": 2},
            },
            rec,
        )
    assert info.value.cause == "max_turns"
    assert [c.name for c in rec.tool_calls] == ["search"]
    assert rec.messages == [{"role": "user", "content": "hi"}]
    assert rec.usage[0].input_tokens == 2


def test_a_failure_without_returned_calls_keeps_the_calls_capture_saw() -> None:
    from agenteval.agents.python import normalize_result
    from agenteval.traces.merge import Seen
    from agenteval.traces.records import Trajectory
    from agenteval.trials.trial import ToolCall

    seen = Seen(source="otel", trajectory=Trajectory(tool_calls=[ToolCall(name="seen")]))
    failure = {"failure": {"cause": "agent_error", "message": "x"}}
    rec = Recorder()
    with pytest.raises(AgentFailure):
        normalize_result(failure, rec, "agent", seen)
    assert [c.name for c in rec.tool_calls] == ["seen"]
    returned = {**failure, "tool_calls": [{"name": "returned", "arguments": {}}]}
    rec = Recorder()
    with pytest.raises(AgentFailure):
        normalize_result(returned, rec, "agent", seen)
    assert [c.name for c in rec.tool_calls] == ["returned"]  # returned calls win
