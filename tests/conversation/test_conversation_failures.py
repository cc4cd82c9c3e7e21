"""A failed conversation keeps what was said and done before it broke: the turns so far
(``metadata.conversation``, ``ended: "failed"``), the calls of the turn it failed in, and
the database as it was left (``metadata.state``); the scorers treat it as failed, not as
judged (docs/conversations.md, "When a conversation fails")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conv_support import HERE

from agenteval import evaluate
from agenteval.agents.base import AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.conversation.state import current_database
from agenteval.trials.trial import ToolCall

STATE = {"sql": ["CREATE TABLE counter (n INTEGER)"], "tables": {"counter": [{"n": 0}]}}


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "trials.jsonl").read_text().splitlines() if x]


def _bump() -> int:
    with sqlite3.connect(current_database()) as db:
        db.execute("UPDATE counter SET n = n + 1")
        (n,) = db.execute("SELECT n FROM counter").fetchone()
    return int(n)


class BreaksInTurnTwo:
    """An agent adapter: each turn adds 1 to the counter through a recorded tool call; in
    its second turn it makes the call, then raises."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "test", "target": "breaks-in-turn-two"}

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        n = _bump()
        call = ToolCall(name="increment", arguments={}, result=n)
        if case.metadata["turn"] == 1:
            rec.tool_calls.append(call)  # observed before the crash
            raise RuntimeError("the agent crashed in turn 2")
        return AgentOutput(output=f"n={n}", tool_calls=[call])


def test_agent_raising_in_turn_two_keeps_the_turns_the_calls_and_the_state(
    tmp_path: Path,
) -> None:
    case = {
        "id": "crash",
        "turns": ["please add", {"user": "and again", "must_contain": ["n=2"]}, "thanks"],
        "initial_state": STATE,
        "expected_state": {"tables": {"counter": [{"n": 2}]}},
        "procedure": [{"tool": "increment", "after_user": "^please"}],
    }
    run = evaluate([case], BreaksInTurnTwo(), out=tmp_path / "run")
    (line,) = _lines(run.run_dir)
    assert line["failure"] == {
        "cause": "agent_error",
        "message": "RuntimeError: the agent crashed in turn 2",
    }
    assert line["output"] is None
    conv = line["metadata"]["conversation"]
    assert conv["ended"] == "failed" and conv["id"].startswith("crash/0/")
    first, broken = conv["turns"]  # the third turn was never reached
    assert first["user"] == "please add" and first["output"] == "n=1"
    assert first["calls"] == [0, 1] and "failed" not in first
    assert broken["user"] == "and again" and broken["output"] is None
    assert broken["failed"] is True and broken["calls"] == [1, 2]
    assert [c["name"] for c in line["tool_calls"]] == ["increment", "increment"]
    # the database as the crash left it: both increments happened
    assert line["metadata"]["state"]["tables"]["counter"]["rows"] == [[2]]
    scores = line["scores"]
    # a cut conversation is not judged on its state or its turns: the failure counts
    assert scores["state_match"]["status"] == "not_applicable"
    assert scores["state_match"]["reason"] == "agent never answered (failure: agent_error)"
    assert scores["turn_expectations"]["status"] == "not_applicable"
    # what was done was done: the call of the failed turn is checked against its message
    assert scores["procedure"]["status"] == "failed"
    assert "call #2 increment in turn 2 after user message" in scores["procedure"]["reason"]
    from agenteval.report import write_html

    write_html(run.run_dir, tmp_path / "report.html")  # the chat marks where it broke
    html = (tmp_path / "report.html").read_text()
    assert "Conversation (2 turns, ended: failed)" in html
    assert html.count("The agent failed in this turn") == 1
    summary = run.summary
    assert summary["failed"] == 1 and summary["failures"]["by_cause"]["agent_error"]["count"] == 1


def test_timeout_mid_conversation_keeps_the_turns_so_far(tmp_path: Path) -> None:
    case = {"id": "slow", "turns": ["a", "b", "c"], "initial_state": STATE}
    run = evaluate([case], "_conv_agents:sleepy", timeout=1.0, out=tmp_path / "run")
    (line,) = _lines(run.run_dir)
    assert line["failure"]["cause"] == "timeout"  # 3 turns of 0.4 s do not fit in 1 s
    conv = line["metadata"]["conversation"]
    assert conv["ended"] == "failed"
    assert [t["output"] for t in conv["turns"]] == ["slept 0", "slept 1", None]
    assert conv["turns"][-1]["failed"] is True and conv["turns"][-1]["user"] == "c"
    assert line["metadata"]["state"]["tables"]["counter"]["rows"] == [[0]]


def test_user_simulator_raising_keeps_the_turns_and_the_users_record(tmp_path: Path) -> None:
    case = {"id": "u", "user": {"goal": "chat"}, "initial_state": STATE}
    run = evaluate(
        [case], "_conv_agents:counter", user="_conv_agents:breaks_later", out=tmp_path / "run"
    )
    (line,) = _lines(run.run_dir)
    assert line["failure"]["cause"] == "user_simulator"
    assert "RuntimeError: the user script broke" in line["failure"]["message"]
    conv = line["metadata"]["conversation"]
    assert conv["ended"] == "failed"
    assert [(t["user"], t["output"]) for t in conv["turns"]] == [("hello", "n=1")]
    assert "failed" not in conv["turns"][0]  # the agent answered; the user broke after
    assert conv["user"] == {"kind": "python", "usage": [], "retries": []}
    assert line["metadata"]["state"]["tables"]["counter"]["rows"] == [[1]]


def test_a_single_turn_stateful_case_that_fails_keeps_its_state(tmp_path: Path) -> None:
    async def boom(case: Case) -> str:
        _bump()
        raise ValueError("no")

    case = {"id": "one", "input": "add", "initial_state": STATE}
    run = evaluate([case], boom, out=tmp_path / "run")
    (line,) = _lines(run.run_dir)
    assert line["failure"]["cause"] == "agent_error"
    assert "conversation" not in line["metadata"]
    assert line["metadata"]["state"]["tables"]["counter"]["rows"] == [[1]]


def test_an_unreadable_state_is_said_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database still locked by a timed-out agent's thread: the trial says why it has no
    state instead of waiting on the event loop."""
    from agenteval.conversation import agent as agent_mod

    def locked(path: Path, *, busy_timeout_s: float = 5.0) -> dict[str, Any]:
        assert busy_timeout_s <= 0.5
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(agent_mod, "snapshot", locked)

    async def boom(case: Case) -> str:
        raise ValueError("no")

    case = {"id": "one", "turns": ["a"], "initial_state": STATE}
    run = evaluate([case], boom, out=tmp_path / "run")
    (line,) = _lines(run.run_dir)
    assert "state" not in line["metadata"]
    assert line["metadata"]["state_error"] == "OperationalError: database is locked"
    assert line["metadata"]["conversation"]["ended"] == "failed"


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
