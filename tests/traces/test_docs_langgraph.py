"""docs/agents/langgraph.md run as written: its agent file, its cases, its one command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("langchain.agents")
pytest.importorskip("openinference.instrumentation.langchain")

from test_docs_agents import run_page


def test_langgraph_page_runs_and_records_every_call(tmp_path: Path, cli: Any) -> None:
    trials = {t["case_id"]: t for t in run_page("langgraph.md", tmp_path, cli)}
    assert set(trials) == {"ada", "grace"}
    for name, cid, orders in (("Ada", 7, 3), ("Grace", 8, 5)):
        t = trials[name.lower()]
        assert t["output"] == f"{name} has {orders} orders"
        calls = t["tool_calls"]
        assert [(c["id"], c["name"], c["arguments"], c["result"], c["error"]) for c in calls] == [
            (f"call_{name}_1", "find_customer", {"name": name}, {"id": cid, "name": name}, None),
            (f"call_{name}_2", "count_orders", {"customer_id": cid}, orders, None),
        ]
        assert all(c["started_at"] and c["duration_s"] >= 0 for c in calls)
        assert t["metadata"]["trajectory_source"] == "otel"
        assert t["usage"] == [{"model": "scripted", "input_tokens": 150, "output_tokens": 24}]
        assert 0 < t["latency"]["active_s"] <= t["latency"]["total_s"]
        tools = {d["name"]: d for d in t["tools"]}
        assert set(tools) == {"find_customer", "count_orders"}
        assert tools["find_customer"]["description"] == "Look a customer up by first name."
        scores = {k: v["value"] for k, v in t["scores"].items()}
        for scorer in (
            "exact_match",
            "tool_selection",
            "trajectory_order",
            "tool_arguments_valid",
            "tool_execution",
            "tool_faithfulness",
        ):
            assert scores[scorer] == 1.0, (scorer, t["scores"][scorer])
