"""Overhead of in-process OpenTelemetry capture, per trial, side by side in one run.

    python bench/capture.py [--spans 10] [--trials 2000] [--rounds 5]

The agent is an ``async`` Python function that emits ``--spans`` GenAI spans per trial
(one model span with token counts and messages, then ``execute_tool`` spans with
arguments and results, alternating), through the real OpenTelemetry SDK, and returns
only the answer. Each trial goes through ``PythonAgent.run`` (capture, mapping, merge),
not through the run directory, so only the capture path is measured. Three rows:

- ``no provider, capture off``: no tracer provider is set, the agent's spans are no-ops;
- ``SDK provider, capture off``: an SDK provider records the spans, agenteval does not look;
- ``SDK provider, capture on``: agenteval's processor collects them and maps them to calls.

``on - off (SDK)`` is what capture adds when the application already records spans;
``on - no provider`` is the whole cost of seeing inside an agent that emitted nothing
before. Rounds alternate the last two rows so drift hits both; the median round counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from opentelemetry import trace

from agenteval.agents.base import Recorder
from agenteval.agents.python import PythonAgent
from agenteval.case import Case

TRACER = trace.get_tracer("bench")  # a proxy: follows whatever provider is set later


def make_agent(n_spans: int) -> Any:
    async def agent(case: Case) -> str:
        with TRACER.start_as_current_span("invoke_agent bench"):
            for i in range(n_spans):
                if i % 2 == 0:
                    with TRACER.start_as_current_span("chat m") as s:
                        s.set_attribute("gen_ai.operation.name", "chat")
                        s.set_attribute("gen_ai.request.model", "m")
                        s.set_attribute("gen_ai.usage.input_tokens", 100)
                        s.set_attribute("gen_ai.usage.output_tokens", 10)
                        s.set_attribute("gen_ai.output.messages", '[{"role":"assistant"}]')
                else:
                    with TRACER.start_as_current_span("execute_tool search") as s:
                        s.set_attribute("gen_ai.operation.name", "execute_tool")
                        s.set_attribute("gen_ai.tool.name", "search")
                        s.set_attribute("gen_ai.tool.call.id", f"c{i}")
                        s.set_attribute("gen_ai.tool.call.arguments", '{"q": "refunds"}')
                        s.set_attribute("gen_ai.tool.call.result", '{"hits": 3}')
        return "answer"

    return agent


async def per_trial_us(agent: PythonAgent, trials: int, expect_calls: int) -> float:
    case = Case(id="c", input="q")
    t0 = time.perf_counter()
    for _ in range(trials):
        rec = Recorder()
        out = await agent.run(case, 0, rec)
        got = len(out.tool_calls if out.tool_calls is not None else rec.tool_calls)
        if got != expect_calls:
            raise SystemExit(f"expected {expect_calls} captured calls, got {got}")
    return (time.perf_counter() - t0) / trials * 1e6


async def main(n_spans: int, trials: int, rounds: int) -> dict[str, Any]:
    fn = make_agent(n_spans)
    tools = n_spans // 2
    off = PythonAgent(fn, capture="off")
    rows: dict[str, list[float]] = {"no provider, capture off": [], "SDK provider, capture off": []}
    rows["SDK provider, capture on"] = []
    for _ in range(rounds):  # before any provider exists
        rows["no provider, capture off"].append(await per_trial_us(off, trials, 0))
    on = PythonAgent(fn, capture="otel")  # installs an SDK provider on its first trial
    await per_trial_us(on, 10, tools)  # warm up (and attach)
    for _ in range(rounds):
        rows["SDK provider, capture off"].append(await per_trial_us(off, trials, 0))
        rows["SDK provider, capture on"].append(await per_trial_us(on, trials, tools))
    med = {k: statistics.median(v) for k, v in rows.items()}
    return {
        "spans_per_trial": n_spans,
        "trials_per_round": trials,
        "rounds": rounds,
        "us_per_trial": {k: round(v, 1) for k, v in med.items()},
        "capture_adds_us": round(
            med["SDK provider, capture on"] - med["SDK provider, capture off"], 1
        ),
        "capture_vs_no_provider_us": round(
            med["SDK provider, capture on"] - med["no provider, capture off"], 1
        ),
    }


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spans", type=int, default=10, help="spans per trial (10)")
    p.add_argument("--trials", type=int, default=2000, help="trials per round (2000)")
    p.add_argument("--rounds", type=int, default=5, help="rounds; the median counts (5)")
    a = p.parse_args()
    result = asyncio.run(main(a.spans, a.trials, a.rounds))
    for name, us in result["us_per_trial"].items():
        print(f"{name:<28} {us:>10.1f} µs/trial")
    print(f"{'capture adds':<28} {result['capture_adds_us']:>10.1f} µs/trial")
    print(json.dumps(result))
