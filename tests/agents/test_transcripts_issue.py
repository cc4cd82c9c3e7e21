"""Issue 15: an agent returning an OpenAI-format transcript scored "never called
find_customer" although the transcript shows the call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenteval import evaluate

OPENAI = [
    {"role": "user", "content": "Which plan is ada@example.com on?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "find_customer", "arguments": '{"email": "ada@example.com"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"id": 7, "plan": "pro"}'},
    {"role": "assistant", "content": "You are on the pro plan."},
]


def test_issue_openai_transcript_now_passes_tool_selection(tmp_path: Path) -> None:
    """The issue's case: a transcript showing find_customer scored "never called" it."""

    def agent(case: Any) -> dict[str, Any]:
        return {"output": "You are on the pro plan.", "messages": OPENAI}

    run = evaluate(
        [{"id": "plan", "input": "Which plan?", "expected_tools": ["find_customer"]}],
        agent,
        out=tmp_path / "run",
    )
    (t,) = run.trials()
    assert t.scores["tool_selection"].value == 1.0, t.scores["tool_selection"].reason
    assert [(c.name, c.arguments) for c in t.tool_calls] == [
        ("find_customer", {"email": "ada@example.com"})
    ]
    assert t.tool_calls[0].result == '{"id": 7, "plan": "pro"}'
    assert t.metadata["trajectory_source"] == "transcript"
    assert t.messages == OPENAI
