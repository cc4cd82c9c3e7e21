"""The span mapping on real OpenInference LangChain/LangGraph spans (recorded fixture):
tool spans carry no call id and a printed ``input.value`` (a bare string for a
one-argument tool), and their ``output.value`` is a serialised ToolMessage."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.proto")

from agenteval.traces.mapping import trajectory_from_spans
from agenteval.traces.tracefile import read_file

LG = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "langgraph.pb"


def test_openinference_tool_spans_take_arguments_and_ids_from_the_model_call() -> None:
    by_trace: dict[str, list] = {}  # type: ignore[type-arg]
    for s in read_file(LG):
        by_trace.setdefault(s.trace_id, []).append(s)
    calls = [
        [
            (c.id, c.name, c.arguments, c.result, c.error)
            for c in trajectory_from_spans(v).tool_calls
        ]
        for v in by_trace.values()
    ]
    assert sorted(calls) == sorted(
        [
            [
                (
                    "call_1",
                    "get_order",
                    {"order_id": "O-1002"},
                    {"id": "O-1002", "status": "shipped", "total": 649.0},
                    None,
                )
            ],
            [
                (
                    "call_2",
                    "customer_spend",
                    {"customer_id": "C-101"},
                    {"orders": 3, "total": 912.5},
                    None,
                ),
                (
                    "call_3",
                    "customer_spend",
                    {"customer_id": "C-999"},
                    None,
                    "ValueError: no customer C-999",
                ),
            ],
        ]
    )
