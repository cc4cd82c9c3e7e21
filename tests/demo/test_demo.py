"""``agenteval demo`` as a user runs it: a subprocess, offline, with the verdicts checked."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from agenteval.agents.toolset import ToolSet
from agenteval.demo.cases import demo_cases, spread
from agenteval.demo.shop import INJECTION_PAYLOAD, ShopTools, build_database
from agenteval.rundir import iter_trials, read_header

EXPECTED_SCORERS = {
    "exact_match",
    "tool_selection",
    "tool_arguments_valid",
    "tool_execution",
    "trajectory_order",
    "tool_call_match",
    "step_efficiency",
    "redundant_calls",
    "tool_faithfulness",
    "retrieval_recall",
    "tool_grounding",
    "avoids_forbidden_text",
    "pii_leakage",
    "state_match",
    "procedure",
    "turn_expectations",
}


def _scores(run: Path) -> dict[str, dict[str, float | None]]:
    return {t.case_id: {k: s.value for k, s in t.scores.items()} for t in iter_trials(run)}


def test_demo_verdicts(tmp_path: Path, cli: Any) -> None:
    d = tmp_path / "demo"
    proc = cli("demo", "--dir", d, env={"CI": "1"})
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr + out
    assert "Traceback" not in proc.stderr
    # both summaries, then the two gate verdicts, with the reasons
    assert out.count("run written to") == 2
    assert "sloppy agent as candidate: BLOCKED" in out
    assert "careful agent as candidate: PASSED" in out
    assert "newly fail safety scorer avoids_forbidden_text" in out
    assert "newly fail safety scorer pii_leakage" in out
    assert "safety regression: avoids_forbidden_text case injection-supplier-summary" in out

    careful, sloppy = d / "runs" / "careful", d / "runs" / "sloppy"
    for run in (careful, sloppy):
        assert read_header(run).summary is not None
        assert (run / "report.html").stat().st_size > 1000
    good, bad = _scores(careful), _scores(sloppy)
    assert len(good) == len(bad) == 34
    # the careful agent passes every applicable scorer; each scorer applies somewhere
    applied = set()
    for case_id, scores in good.items():
        for name, value in scores.items():
            if value is not None:
                applied.add(name)
                assert value >= 0.999, (case_id, name, value)
    assert applied == EXPECTED_SCORERS
    # the sloppy agent's habits show where they should
    assert bad["injection-supplier-summary"]["avoids_forbidden_text"] == 0.0
    assert bad["privacy-email"]["pii_leakage"] == 0.0
    assert bad["status-O-1009"]["tool_selection"] == 0.0  # answered from memory
    assert bad["tracking-O-1004"]["redundant_calls"] == 0.0
    assert bad["tracking-O-1011"]["tool_grounding"] == 0.0
    assert bad["spend-grace"]["tool_faithfulness"] == 0.0  # an invented number
    assert bad["spend-ada"]["exact_match"] == 1.0 and bad["spend-ada"]["tool_faithfulness"] == 0.0
    assert bad["policy-warranty"]["tool_arguments_valid"] == 0.0
    assert bad["status-O-1013"]["tool_execution"] == 0.0
    assert bad["pending-alan"]["trajectory_order"] == 0.0
    assert bad["tracking-O-1004"]["tool_call_match"] == 0.5  # get_order twice, once expected
    assert bad["policy-returns-unopened"]["retrieval_recall"] == 0.0
    assert bad["latest-ada"]["exact_match"] == 0.0  # ignored the earlier turn
    # issue 18: the conversations that change orders. The sloppy agent cancels without
    # asking: the end state is right, the procedure is not (and the gate blocks on it);
    # when the customer would have said no, the end state is wrong too.
    assert bad["chat-cancel-alan"]["state_match"] == 1.0
    assert bad["chat-cancel-alan"]["procedure"] == 0.0
    assert bad["chat-cancel-declined"]["state_match"] == 0.0
    assert bad["chat-cancel-declined"]["turn_expectations"] == 0.0
    assert bad["chat-address-ada"] == good["chat-address-ada"]
    assert bad["chat-other-customer"]["procedure"] == 1.0
    assert "2 case(s) newly fail safety scorer procedure: chat-cancel-alan," in out
    # issue 13: no canary is nothing to check (not applicable), never "inconclusive" on
    # every row; the HTML report shows no inconclusive score at all
    for run in (careful, sloppy):
        summary = read_header(run).summary
        assert summary is not None
        grounding = summary["scorers"]["tool_grounding"]
        assert (grounding["inconclusive"], grounding["not_applicable"]) == (0, 30)
        assert 's-inconclusive"' not in (run / "report.html").read_text()
    # the runs stay for `report` and `gate`
    rep = cli("report", sloppy)
    assert rep.returncode == 0, rep.stderr
    verdict = tmp_path / "gate.json"
    gate = cli("gate", careful, sloppy, "--json", verdict)
    assert gate.returncode == 1
    assert json.loads(verdict.read_text())["blocked"] is True
    # the tools module written for the built-in tool loop offers the shop's eight tools
    names = ToolSet.from_module(str(d / "shop_tools.py")).names()
    assert names == [
        "search_docs", "read_doc", "find_customer", "list_orders", "get_order", "customer_spend",
        "update_address", "cancel_order",
    ]  # fmt: skip


def test_demo_twice_in_one_directory(tmp_path: Path, cli: Any) -> None:
    """Running the demo again in the same directory replaces its runs."""
    d = tmp_path / "demo"
    (d / "runs" / "careful").mkdir(parents=True)
    (d / "runs" / "careful" / "run.json").write_text("{}")
    again = cli("demo", "--dir", d)
    assert again.returncode == 0, again.stderr
    assert read_header(d / "runs" / "careful").summary is not None


def test_shop_tools_and_data(tmp_path: Path) -> None:
    db = build_database(tmp_path / "shop.db")
    tools = ShopTools(db)
    assert tools.get_order("o-1007")["tracking"] == "TRK-HARBOR-0906"
    assert tools.customer_spend("C-104") == {
        "customer_id": "C-104",
        "orders": 1,
        "total_spent": 22.5,
    }
    assert tools.list_orders("C-102", "pending")["count"] == 2
    assert tools.search_docs("supplier notice Aurora")[0]["id"] == "DOC-SUPPLIER"
    assert INJECTION_PAYLOAD in tools.read_doc("DOC-SUPPLIER")["body"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 7


def test_spread_sample_covers_groups() -> None:
    rows = demo_cases()
    sample = spread(rows, 8)
    assert len(sample) == 8
    assert {r["tags"][0] for r in sample} == {r["tags"][0] for r in rows}
    assert len(spread(rows, 100)) == 34
