"""Overhead of capture, per trial: capture on vs off, side by side in one run, for a
synthetic span emitter and for real PydanticAI, OpenAI Agents SDK and LangGraph agents.

    python bench/capture.py [--agents synthetic,pydantic-ai,openai-agents,langgraph]
                            [--trials N] [--rounds 5]

Each agent runs in its own process (capture attaches to process-wide tracing, and the
"no provider" row needs a process where none was ever set). Every trial goes through
``PythonAgent.run`` (capture, mapping, merge), not through the run directory, so only the
agent and the capture path are measured, and each checks that capture saw its calls.

- ``synthetic``: an ``async`` function emitting ``--spans`` OpenTelemetry GenAI spans per
  trial (a model span with tokens and messages, then an ``execute_tool`` span, alternating);
- ``pydantic-ai``: ``docs/agents/pydantic-ai.md``'s agent (a scripted ``FunctionModel``,
  two tool calls, three model turns, ``Agent.instrument_all()``);
- ``langgraph``: ``docs/agents/langgraph.md``'s agent (``create_agent`` with a scripted
  chat model, two tool calls, OpenInference's ``LangChainInstrumentor``);
- ``openai-agents``: an SDK agent with two function tools against the bundled fake OpenAI
  server's Responses API (in another process, no added latency): three HTTP model calls.

Rows, per agent: ``no provider, capture off`` (OpenTelemetry agents: no tracer provider
set, their spans are no-ops; the Agents SDK: its tracing as it comes), then ``capture off``
and ``capture on`` in alternating rounds (for OpenTelemetry agents an SDK provider is set by
then, so "off" still records spans, agenteval does not look). ``adds`` = on - off,
``on/off`` = their ratio. The median round counts. Two tables: CPU time of the agent's
process per trial (what capture costs; little disturbed by other load on the machine, and
the fake server's work is not in it), then wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case
from agenteval.llm.recorder import Recorder

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("synthetic", "pydantic-ai", "openai-agents", "langgraph")
DEFAULT_TRIALS = {"synthetic": 1000, "pydantic-ai": 100, "openai-agents": 50, "langgraph": 100}
Factory = Callable[[], tuple[Callable[[Case], Any], int]]


def synthetic(n_spans: int) -> tuple[Callable[[Case], Any], int]:
    from opentelemetry import trace

    tracer = trace.get_tracer("bench")  # a proxy: follows whatever provider is set later

    async def agent(case: Case) -> str:
        with tracer.start_as_current_span("invoke_agent bench"):
            for i in range(n_spans):
                if i % 2 == 0:
                    with tracer.start_as_current_span("chat m") as s:
                        s.set_attribute("gen_ai.operation.name", "chat")
                        s.set_attribute("gen_ai.request.model", "m")
                        s.set_attribute("gen_ai.usage.input_tokens", 100)
                        s.set_attribute("gen_ai.usage.output_tokens", 10)
                        s.set_attribute("gen_ai.output.messages", '[{"role":"assistant"}]')
                else:
                    with tracer.start_as_current_span("execute_tool search") as s:
                        s.set_attribute("gen_ai.operation.name", "execute_tool")
                        s.set_attribute("gen_ai.tool.name", "search")
                        s.set_attribute("gen_ai.tool.call.id", f"c{i}")
                        s.set_attribute("gen_ai.tool.call.arguments", '{"q": "refunds"}')
                        s.set_attribute("gen_ai.tool.call.result", '{"hits": 3}')
        return "answer"

    return agent, n_spans // 2


def pydantic_ai() -> tuple[Callable[[Case], Any], int]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    Agent.instrument_all()

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        turns = sum(1 for m in messages if m.kind == "response")
        if turns == 0:
            return ModelResponse(parts=[ToolCallPart("find_customer", {"name": "Ada"})])
        if turns == 1:
            return ModelResponse(parts=[ToolCallPart("count_orders", {"customer_id": 7})])
        return ModelResponse(parts=[TextPart("Ada has 3 orders")])

    agent: Agent[None, str] = Agent(FunctionModel(model))

    @agent.tool_plain
    def find_customer(name: str) -> dict[str, Any]:
        """Look a customer up by first name."""
        return {"id": 7, "name": name}

    @agent.tool_plain
    def count_orders(customer_id: int) -> int:
        """How many orders a customer has placed."""
        return 3

    async def answer(case: Case) -> str:
        return (await agent.run(str(case.input))).output

    return answer, 2


def langgraph() -> tuple[Callable[[Case], Any], int]:
    from langchain.agents import create_agent
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument()

    class Scripted(BaseChatModel):
        model_name: str = "scripted"

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            turns = sum(1 for m in messages if m.type == "ai")
            steps = [("find_customer", {"name": "Ada"}), ("count_orders", {"customer_id": 7})]
            if turns < 2:
                name, args = steps[turns]
                reply = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{turns}"}])
            else:
                reply = AIMessage("Ada has 3 orders")
            reply.usage_metadata = {"input_tokens": 50, "output_tokens": 8, "total_tokens": 58}
            return ChatResult(generations=[ChatGeneration(message=reply)])

    @tool
    def find_customer(name: str) -> dict[str, Any]:
        """Look a customer up by first name."""
        return {"id": 7, "name": name}

    @tool
    def count_orders(customer_id: int) -> int:
        """How many orders a customer has placed."""
        return 3

    agent = create_agent(Scripted(), [find_customer, count_orders])

    async def answer(case: Case) -> str:
        state = await agent.ainvoke({"messages": [{"role": "user", "content": str(case.input)}]})
        return str(state["messages"][-1].content)

    return answer, 2


@contextmanager
def fake_server() -> Iterator[str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "agenteval.testing.fake_openai", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        assert p.stdout is not None
        line = p.stdout.readline()
        if not line.startswith("READY"):
            raise SystemExit(f"fake server did not start: {line!r}")
        yield f"http://127.0.0.1:{line.split()[1]}/v1"
    finally:
        p.terminate()
        p.wait(10)


def openai_agents(base_url: str) -> tuple[Callable[[Case], Any], int]:
    from openai import AsyncOpenAI

    from agents import Agent, OpenAIResponsesModel, Runner, function_tool

    @function_tool
    def find_customer(name: str) -> str:
        """Look a customer up by first name."""
        return json.dumps({"id": 7, "name": name})

    @function_tool
    def count_orders(customer_id: int) -> int:
        """How many orders a customer has placed."""
        return 3

    model = OpenAIResponsesModel("gpt-fake", AsyncOpenAI(base_url=base_url, api_key="bench"))
    agent = Agent(name="shop", tools=[find_customer, count_orders], model=model)
    question = (
        'Ada? [[call:find_customer {"name": "Ada"}]] [[call:count_orders {"customer_id": 7}]]'
    )

    async def answer(case: Case) -> str:
        return str((await Runner.run(agent, question)).final_output)

    return answer, 2


async def per_trial_us(agent: PythonAgent, trials: int, expect_calls: int) -> tuple[float, float]:
    """(wall, CPU) µs per trial; CPU is this process's (not the fake server's)."""
    case = Case(id="c", input="How many orders has Ada placed?")
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(trials):
        rec = Recorder()
        out = await agent.run(case, 0, rec)
        got = len(out.tool_calls if out.tool_calls is not None else rec.tool_calls)
        if got != expect_calls:
            raise SystemExit(f"expected {expect_calls} captured calls, got {got}")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall / trials * 1e6, cpu / trials * 1e6


def _median(xs: list[tuple[float, float]], i: int) -> float:
    return statistics.median(x[i] for x in xs)


async def measure(
    fn: Callable[[Case], Any], calls: int, on_mode: str, trials: int, rounds: int
) -> dict[str, Any]:
    off = PythonAgent(fn, capture="off")
    await per_trial_us(off, 5, 0)  # warm up, before any provider exists
    rows: dict[str, list[tuple[float, float]]] = {
        "no provider, capture off": [await per_trial_us(off, trials, 0) for _ in range(rounds)],
        "capture off": [],
        "capture on": [],
    }
    on = PythonAgent(fn, capture=on_mode)  # OpenTelemetry: installs an SDK provider
    await per_trial_us(on, 5, calls)  # warm up (and attach)
    for _ in range(rounds):
        rows["capture off"].append(await per_trial_us(off, trials, 0))
        rows["capture on"].append(await per_trial_us(on, trials, calls))
    out: dict[str, Any] = {"trials_per_round": trials, "rounds": rounds, "calls_per_trial": calls}
    for i, unit in ((1, "cpu"), (0, "wall")):
        med = {k: _median(v, i) for k, v in rows.items()}
        out[f"{unit}_us_per_trial"] = {k: round(v, 1) for k, v in med.items()}
        out[f"{unit}_adds_us"] = round(med["capture on"] - med["capture off"], 1)
        out[f"{unit}_ratio"] = round(med["capture on"] / med["capture off"], 3)
    return out


def one(name: str, trials: int, rounds: int, spans: int) -> dict[str, Any]:
    """Measure one agent in this process."""
    if name == "openai-agents":
        os.environ.pop("OPENAI_API_KEY", None)  # the SDK's own exporter uploads nothing
        with fake_server() as url:
            fn, calls = openai_agents(url)
            return asyncio.run(measure(fn, calls, "openai-agents", trials, rounds))
    factories: dict[str, Factory] = {
        "synthetic": lambda: synthetic(spans),
        "pydantic-ai": pydantic_ai,
        "langgraph": langgraph,
    }
    fn, calls = factories[name]()
    return asyncio.run(measure(fn, calls, "otel", trials, rounds))


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--agents", default=",".join(AGENTS), help="comma-separated (all)")
    p.add_argument("--trials", type=int, help=f"trials per round (per agent: {DEFAULT_TRIALS})")
    p.add_argument("--rounds", type=int, default=5, help="rounds; the median counts (5)")
    p.add_argument("--spans", type=int, default=10, help="synthetic: spans per trial (10)")
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one agent here
    a = p.parse_args()
    if a.one:
        trials = a.trials or DEFAULT_TRIALS[a.one]
        print(json.dumps(one(a.one, trials, a.rounds, a.spans)))
        return
    names = [n for n in a.agents.split(",") if n]
    unknown = sorted(set(names) - set(AGENTS))
    if unknown:
        p.error(f"unknown agents: {', '.join(unknown)} (known: {', '.join(AGENTS)})")
    results: dict[str, Any] = {}
    for name in names:
        cmd = [sys.executable, __file__, "--one", name, "--rounds", str(a.rounds)]
        cmd += ["--spans", str(a.spans)] + (["--trials", str(a.trials)] if a.trials else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: {proc.stderr.strip() or proc.stdout.strip()}")
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    head = f"{'agent':<14} {'no provider':>12} {'off':>10} {'on':>10} {'adds':>9} {'on/off':>7}"
    for unit in ("cpu", "wall"):
        print(f"{unit.upper()} µs per trial (median of rounds)")
        print(head)
        for name, r in results.items():
            us = r[f"{unit}_us_per_trial"]
            print(
                f"{name:<14} {us['no provider, capture off']:>12.1f} {us['capture off']:>10.1f}"
                f" {us['capture on']:>10.1f} {r[f'{unit}_adds_us']:>9.1f}"
                f" {r[f'{unit}_ratio']:>7.3f}"
            )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
