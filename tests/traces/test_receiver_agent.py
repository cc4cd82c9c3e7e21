"""ReceiverAgent through the real runner: precedence, failed trials, the wait vs the timeout."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.conversation.agent import ConversationAgent
from agenteval.run.runner import run_one
from agenteval.traces.receiver import MAX_BODY, OtlpReceiver
from agenteval.traces.receiver_agent import ReceiverAgent
from agenteval.trials.trial import ToolCall, Trial


def tool_span(rec: Recorder, root: bool) -> dict[str, Any]:
    assert rec.trace is not None
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "from_span",
        "gen_ai.tool.call.arguments": '{"q": 1}',
        "gen_ai.tool.call.result": "2",
        "gen_ai.request.model": "m",
    }
    return {
        "traceId": rec.trace.trace_id,
        "spanId": "ab" * 8,
        "parentSpanId": rec.trace.span_id if root else "cd" * 8,
        "name": "execute_tool from_span",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def chat_span(rec: Recorder) -> dict[str, Any]:
    assert rec.trace is not None
    return {
        "traceId": rec.trace.trace_id,
        "spanId": "ef" * 8,
        "parentSpanId": "cd" * 8,
        "name": "chat m",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "11"}},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "5"}},
        ],
    }


class Inner:
    """An adapter stand-in that exports spans of the trial's trace, then answers or fails."""

    def __init__(self, url: str, result: AgentOutput | AgentFailure, root: bool = True) -> None:
        self.url = url
        self.result = result
        self.root = root
        self.usage = False

    def describe(self) -> dict[str, Any]:
        return {"kind": "stub"}

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        doc = {
            "resourceSpans": [
                {"scopeSpans": [{"spans": [tool_span(rec, self.root), chat_span(rec)]}]}
            ]
        }
        async with (
            aiohttp.ClientSession() as s,
            s.post(
                self.url, data=json.dumps(doc), headers={"Content-Type": "application/json"}
            ) as r,
        ):
            assert r.status == 200
        if self.usage:
            rec.add_usage("m", 100, 50)
        if isinstance(self.result, AgentFailure):
            raise self.result
        return self.result


def trial(
    result: AgentOutput | AgentFailure,
    *,
    wait_s: float = 5.0,
    root: bool = True,
    usage: bool = False,
    timeout_s: float | None = None,
    wrapped: bool = False,
) -> tuple[Trial, float, OtlpReceiver]:
    async def go() -> tuple[Trial, float, OtlpReceiver]:
        receiver = OtlpReceiver("127.0.0.1", 0)
        inner = Inner(receiver.traces_url, result, root)
        inner.usage = usage
        agent: Any = ReceiverAgent(inner, receiver, wait_s)
        if wrapped:  # as every run's Session wraps it (agenteval.conversation.agent)
            agent = ConversationAgent(agent)
        await agent.start()
        try:
            t0 = time.monotonic()
            t = await run_one(agent, Case(id="c", input="q"), 0, timeout_s)
            return t, time.monotonic() - t0, receiver
        finally:
            await agent.close()

    return asyncio.run(go())


def test_calls_the_response_lists_win_over_the_spans() -> None:
    listed = [ToolCall(name="listed", arguments={})]
    t, _, r = trial(AgentOutput(output="a", tool_calls=listed))
    assert [c.name for c in t.tool_calls] == ["listed"]
    assert "trajectory_source" not in t.metadata and t.metadata["otlp_spans"] == 2
    assert r.max_body == MAX_BODY == 16 * 1024 * 1024


def test_no_listed_calls_the_spans_calls_and_usage_are_the_trials() -> None:
    t, elapsed, _ = trial(AgentOutput(output="a", tool_calls=[]))
    assert [(c.name, c.arguments, c.result) for c in t.tool_calls] == [("from_span", {"q": 1}, 2)]
    assert t.metadata["trajectory_source"] == "otlp"
    assert [(u.model, u.input_tokens, u.output_tokens) for u in t.usage] == [("m", 11, 5)]
    assert elapsed < 2  # the root span was in: no full --otlp-wait of 5 s


def test_wrapped_as_a_run_wraps_it_the_spans_still_arrive() -> None:
    """``agenteval run`` wraps every agent in a ConversationAgent: its ``settle`` must reach
    the receiver's, or a single-turn trial loses the spans' calls (and a failed one too)."""
    t, _, _ = trial(AgentOutput(output="a", tool_calls=[]), wrapped=True)
    assert [c.name for c in t.tool_calls] == ["from_span"]
    assert t.metadata["trajectory_source"] == "otlp" and t.metadata["otlp_spans"] == 2
    t, _, _ = trial(AgentFailure("server_error", "HTTP 500"), wait_s=10, root=True, wrapped=True)
    assert [c.name for c in t.tool_calls] == ["from_span"]


def test_usage_the_response_reported_wins() -> None:
    t, _, _ = trial(AgentOutput(output="a"), usage=True)
    assert [(u.model, u.input_tokens, u.output_tokens) for u in t.usage] == [("m", 100, 50)]
    assert [c.name for c in t.tool_calls] == ["from_span"]


def test_a_failed_trial_keeps_the_spans_calls_and_waits_like_an_answered_one() -> None:
    """The wait ends early once the root span is in; without it, the whole --otlp-wait
    (a failing tool's span may still be in the exporter's batch)."""
    t, elapsed, r = trial(AgentFailure("server_error", "HTTP 500"), wait_s=10, root=True)
    assert t.failure is not None and t.failure.cause == "server_error"
    assert [c.name for c in t.tool_calls] == ["from_span"]
    assert t.metadata["trajectory_source"] == "otlp"
    assert elapsed < 3
    assert r.stats.spans == 2
    t, elapsed, _ = trial(AgentFailure("server_error", "HTTP 500"), wait_s=1.0, root=False)
    assert [c.name for c in t.tool_calls] == ["from_span"] and elapsed >= 1.0


def test_the_wait_is_not_part_of_the_timeout_or_the_latency() -> None:
    """No root span: the whole 1 s wait, after an answer within the 0.5 s timeout."""
    t, elapsed, _ = trial(AgentOutput(output="a"), wait_s=1.0, root=False, timeout_s=0.5)
    assert t.failure is None and t.output == "a"
    assert elapsed >= 1.0 and t.latency.total_s < 0.5
