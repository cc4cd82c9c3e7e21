"""Issue 26's tryout, rebuilt: a PydanticAI agent with 3 tools over SQLite and 11 cases,
run good and broken through ``agenteval run``, then ``agenteval gate good broken``.

The broken agent is broken the way a prompt change breaks agents: it answers one
question from memory and guesses customer ids instead of looking them up (one guess does
not exist, and its tool raises: a crash). Before issue 26 the gate said ``verdict: PASSED``
and exited 0 (nothing was significant on 8 paired cases); it must not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk")

AGENT = textwrap.dedent(
    '''
    import os
    import sqlite3

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    Agent.instrument_all()
    BROKEN = os.environ.get("SHOP_AGENT") == "broken"
    GUESSES = {"Ada": 1, "Grace": 2, "Alan": 5, "Linus": 4, "Barbara": 9, "Ken": 3}

    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(
        """
        create table customers (id integer primary key, name text, city text);
        create table orders (id integer primary key, customer_id integer, total real);
        insert into customers values (1, 'Ada', 'Paris'), (2, 'Grace', 'Lyon'),
            (3, 'Alan', 'Oslo'), (4, 'Linus', 'Rome'), (5, 'Barbara', 'Berlin'),
            (6, 'Ken', 'Madrid');
        insert into orders (customer_id, total) values (1, 10), (1, 20), (1, 30),
            (2, 5), (2, 6), (2, 7), (2, 8), (2, 9), (3, 40), (4, 1), (4, 2),
            (5, 3), (5, 4), (5, 5), (5, 6);
        """
    )


    def model(messages, info: AgentInfo) -> ModelResponse:
        """A scripted LLM: the good one looks ids up; the broken one guesses them."""
        q = str(messages[0].parts[-1].content)
        last = messages[-1].parts[-1]
        turn = sum(1 for m in messages if m.kind == "response")
        name = q.rstrip("?").split()[-1 if "total" in q else -2]
        if q.startswith("Which city"):
            if BROKEN and name == "Ada":
                return ModelResponse(parts=[TextPart("Ada is in London")])  # from memory
            if turn == 0:
                return ModelResponse(parts=[ToolCallPart("find_customer", {"name": name})])
            return ModelResponse(parts=[TextPart(f"{name} is in {last.content['city']}")])
        if q.startswith("What is the total"):
            order = int(name)
            if turn == 0:
                return ModelResponse(parts=[ToolCallPart("order_total", {"order_id": order})])
            return ModelResponse(parts=[TextPart(f"Order {order} totals {last.content:g}")])
        if BROKEN:
            if turn == 0:
                guess = {"customer_id": GUESSES[name]}
                return ModelResponse(parts=[ToolCallPart("list_orders", guess)])
            return ModelResponse(parts=[TextPart(f"{name} has {len(last.content)} orders")])
        if turn == 0:
            return ModelResponse(parts=[ToolCallPart("find_customer", {"name": name})])
        if turn == 1:
            found = {"customer_id": last.content["id"]}
            return ModelResponse(parts=[ToolCallPart("list_orders", found)])
        return ModelResponse(parts=[TextPart(f"{name} has {len(last.content)} orders")])


    agent = Agent(FunctionModel(model), instructions="Answer from the tools.")


    @agent.tool_plain
    def find_customer(name: str) -> dict:
        """A customer by first name: id, name, city."""
        row = db.execute("select id, name, city from customers where name = ?", (name,))
        cid, name, city = row.fetchone()
        return {"id": cid, "name": name, "city": city}


    @agent.tool_plain
    def list_orders(customer_id: int) -> list:
        """A customer's orders (id, total)."""
        if not db.execute("select 1 from customers where id = ?", (customer_id,)).fetchone():
            raise ValueError(f"no customer with id {customer_id}")
        rows = db.execute("select id, total from orders where customer_id = ?", (customer_id,))
        return [{"id": i, "total": t} for i, t in rows]


    @agent.tool_plain
    def order_total(order_id: int) -> float:
        """One order's total."""
        return db.execute("select total from orders where id = ?", (order_id,)).fetchone()[0]


    def answer(case):
        return agent.run_sync(case.input).output
    '''
)

COUNTS = {"Ada": 3, "Grace": 5, "Alan": 1, "Linus": 2, "Barbara": 4, "Ken": 0}
CITIES = {"Ada": "Paris", "Grace": "Lyon", "Alan": "Oslo"}


def _cases() -> list[dict[str, object]]:
    lookup = ["find_customer", "list_orders"]
    out: list[dict[str, object]] = [
        {"id": f"orders-{n.lower()}", "input": f"How many orders has {n} placed?",
         "expected": f"{n} has {k} orders", "expected_tools": lookup,
         "expected_trajectory": lookup}
        for n, k in COUNTS.items()
    ]  # fmt: skip
    out += [
        {"id": f"city-{n.lower()}", "input": f"Which city is {n} in?",
         "expected": f"{n} is in {c}", "expected_tools": ["find_customer"],
         "expected_trajectory": ["find_customer"]}
        for n, c in CITIES.items()
    ]  # fmt: skip
    out += [
        {"id": f"total-{o}", "input": f"What is the total of order {o}?",
         "expected": f"Order {o} totals {t}", "expected_tools": ["order_total"],
         "expected_trajectory": ["order_total"]}
        for o, t in ((1, 10), (9, 40))
    ]  # fmt: skip
    return out


def _cli(tmp: Path, *args: str, mode: str = "good") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SHOP_AGENT=mode)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_broken_agent_on_eleven_cases_is_not_passed(tmp_path: Path) -> None:
    (tmp_path / "shop_sql.py").write_text(AGENT, encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in _cases()), encoding="utf-8")
    ds = str(cases)
    for mode in ("good", "broken"):
        r = _cli(tmp_path, "run", ds, "--agent", "shop_sql:answer", "--out", mode, "--quiet",
                 mode=mode)  # fmt: skip
        assert r.returncode == 0, r.stderr
    gate = _cli(tmp_path, "gate", "good", "broken", "--json", "gate.json")
    out = json.loads((tmp_path / "gate.json").read_text())
    scorers = {s["scorer"]: s for s in out["scorers"]}
    em = scorers["exact_match"]
    # what the tryout saw: 3 newly failing answers on the paired cases, a new crash
    assert (em["paired"], sorted(em["got_worse"])) == (
        10,
        ["city-ada", "orders-alan", "orders-ken"],
    )
    assert out["failures"]["newly_failed"] == ["orders-barbara"]
    assert len(scorers["tool_selection"]["got_worse"]) >= 4
    # the pre-issue-26 rule: not blocked and not underpowered was "verdict: PASSED", exit 0
    assert out["blocked"] is False and out["underpowered"] is False
    # now: INCONCLUSIVE, exit 3, saying what it saw and how many cases would settle it
    assert (out["verdict"], gate.returncode) == ("INCONCLUSIVE", 3), gate.stdout
    assert "PASSED" not in gate.stdout
    line = next(x for x in out["cannot_tell"] if x.startswith("exact_match"))
    assert "3 newly failing: orders-alan, orders-ken, city-ada" in line
    assert "cases would settle it" in line
    # the output leads with what got worse, before the table
    assert gate.stdout.index("got worse:") < gate.stdout.index("Scorers (paired cases)")
    assert list(out)[:2] == ["verdict", "got_worse"]
    # a team's policy blocks it outright
    strict = _cli(tmp_path, "gate", "good", "broken", "--no-new-failures", "exact_match")
    assert strict.returncode == 1 and "verdict: BLOCKED" in strict.stdout
    floor = _cli(tmp_path, "gate", "good", "broken", "--require", "exact_match>=0.9")
    assert floor.returncode == 1, floor.stdout
    # and the unchanged agent passes, on 11 cases
    same = _cli(tmp_path, "gate", "good", "good")
    assert same.returncode == 0 and "verdict: PASSED" in same.stdout, same.stdout
