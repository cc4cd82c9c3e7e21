"""merge(): which source wins, and what captured data fills in."""

from __future__ import annotations

from agenteval.agents.base import AgentOutput, Recorder
from agenteval.traces.mapping import Trajectory
from agenteval.traces.merge import Seen, keep_partial, merge
from agenteval.trials.trial import ToolCall, Usage

SEEN = Seen(
    source="otel",
    trajectory=Trajectory(
        tool_calls=[ToolCall(name="span_call")],
        usage=[Usage(model="m", input_tokens=5, output_tokens=1)],
        tools=[{"name": "span_call", "parameters": {"type": "object"}}],
        active_s=0.25,
        token_details={"m": {"cache_read.input_tokens": 4}},
    ),
)
TRANSCRIPT = [
    {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "t", "arguments": "{}"}}]}
]


def test_captured_data_fills_what_the_agent_left_out() -> None:
    rec = Recorder()
    out = merge(AgentOutput(output="a", metadata={"k": 1}), SEEN, rec)
    assert [c.name for c in out.tool_calls or []] == ["span_call"]
    assert out.tools == [{"name": "span_call", "parameters": {"type": "object"}}]
    assert out.metadata == {
        "trajectory_source": "otel",
        "token_details": {"m": {"cache_read.input_tokens": 4}},
        "k": 1,
    }
    assert [(u.model, u.input_tokens) for u in rec.usage] == [("m", 5)]
    assert rec.active_s == 0.25


def test_transcript_beats_spans_and_the_agents_usage_and_tools_are_kept() -> None:
    rec = Recorder()
    rec.add_usage("mine", 1, 1)  # what the agent returned
    tools = [{"name": "t", "parameters": {"type": "object"}}]
    out = merge(AgentOutput(output="a", messages=TRANSCRIPT, tools=tools), SEEN, rec)
    assert [c.name for c in out.tool_calls or []] == ["t"]
    assert out.metadata["trajectory_source"] == "transcript"
    assert out.tools == tools
    assert [(u.model, u.input_tokens) for u in rec.usage] == [("mine", 1)]


def test_the_agents_own_trajectory_source_key_is_kept() -> None:
    out = merge(AgentOutput(output="a", metadata={"trajectory_source": "mine"}), SEEN, Recorder())
    assert out.metadata["trajectory_source"] == "mine"


def test_keep_partial_puts_what_was_seen_on_the_recorder() -> None:
    rec = Recorder()
    assert SEEN.trajectory is not None
    keep_partial(SEEN.trajectory, rec, "otel")
    assert [c.name for c in rec.tool_calls] == ["span_call"]
    assert rec.metadata == {"trajectory_source": "otel"}
    assert rec.usage[0].input_tokens == 5 and rec.active_s == 0.25
