"""The promises of docs/conversations.md not covered elsewhere: endings, timeouts, user
failures, resume checks, state outside a trial, the scorers' view, library use."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conv_support import HERE, by_case, run, write_cases

from agenteval.cases.case import Case
from agenteval.cases.conversation import InitialState
from agenteval.conversation import state as state_mod
from agenteval.conversation.state import build, current_database, snapshot
from agenteval.scorers import exact_match, redundant_calls, tool_selection
from agenteval.trials.trial import Trial


def test_no_answer_ends_the_conversation_and_timeout_bounds_it(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "q", "turns": ["a", "b", "c"]}])
    r = run("run", cases, "--agent", "_conv_agents:quits", "--out", tmp_path / "a")
    assert r.returncode == 4  # the trial has no final answer
    line = by_case(tmp_path / "a")[("q", 0)]
    conv = line["metadata"]["conversation"]
    assert conv["ended"] == "no_answer" and [t["output"] for t in conv["turns"]] == ["first", None]
    r = run(
        "run", cases, "--agent", "_conv_agents:sleepy", "--timeout", "1", "--out", tmp_path / "b"
    )
    line = by_case(tmp_path / "b")[("q", 0)]
    assert line["failure"]["cause"] == "timeout"  # 3 turns of 0.4 s do not fit in 1 s
    # the failed trial keeps the transcript so far
    assert [m["content"] for m in line["messages"]][:4] == ["a", "slept 0", "b", "slept 1"]


def test_user_failures_and_resume_refuses_another_user(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "u", "user": {"goal": "g"}}])
    agent = ["--agent", "_conv_agents:remembering"]
    run("run", cases, *agent, "--user", "_conv_agents:number", "--out", tmp_path / "a")
    failure = by_case(tmp_path / "a")[("u", 0)]["failure"]
    assert failure["cause"] == "user_simulator"
    assert "returned int; expected str or None" in failure["message"]
    dead = ["--user-endpoint", "http://127.0.0.1:9/v1", "--user-model", "m", "--user-retries", "0"]
    dead += ["--no-user-cache"]
    run("run", cases, *agent, *dead, "--out", tmp_path / "b")
    failure = by_case(tmp_path / "b")[("u", 0)]["failure"]
    assert failure["cause"] == "user_simulator"
    assert failure["message"].startswith("the simulated user failed (connection)")
    again = run(
        "run", cases, *agent, "--user", "_conv_agents:polite", "--out", tmp_path / "a", "--resume"
    )
    assert again.returncode == 2
    assert "agent.user" in again.stderr and "Traceback" not in again.stderr
    both = run("run", cases, *agent, "--user", "x:y", "--user-endpoint", "http://h/v1")
    assert both.returncode == 2 and "choose one simulated user" in both.stderr


def test_current_database_outside_a_trial_and_the_snapshot_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(LookupError, match="no per-trial database"):
        current_database()
    db = tmp_path / "s.db"
    build(db, InitialState(tables={"t": [{"n": i} for i in range(5)]}))
    monkeypatch.setattr(state_mod, "MAX_SNAPSHOT_ROWS", 3)
    snap = snapshot(db)["tables"]["t"]
    assert snap == {"columns": ["n"], "rows": [[0], [1], [2]], "truncated": True}
    with sqlite3.connect(db) as conn:  # build() ran the rows into a real table
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (5,)


def test_existing_scorers_see_the_final_answer_and_the_whole_trajectory() -> None:
    case = Case.model_validate(
        {"id": "c", "turns": ["a", "b"], "expected": "done", "expected_tools": ["look"]}
    )
    call = {"name": "look", "arguments": {"q": 1}, "result": "x"}
    turns = [
        {"user": "a", "output": "working", "calls": [0, 1]},
        {"user": "b", "output": "done", "calls": [1, 2]},
    ]
    trial = Trial(
        case_id="c",
        output="done",
        tool_calls=[call, call],
        metadata={"conversation": {"turns": turns}},
    )
    assert exact_match(case, trial).value == 1.0  # the last turn's answer
    assert tool_selection(case, trial).value == 1.0  # calls of any turn
    assert redundant_calls(case, trial).value == 0.0  # the same call again in turn 2


def test_a_user_field_of_another_shape_stays_metadata() -> None:
    case = Case.model_validate({"id": "x", "input": "q", "user": "alice", "turns": 3})
    assert case.metadata == {"user": "alice", "turns": 3}
    assert case.user is None and case.turns is None and not case.conversational


def test_library_evaluate_with_a_simulated_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agenteval import evaluate
    from agenteval.agents.python import PythonAgent
    from agenteval.conversation.agent import ConversationAgent
    from agenteval.conversation.users import PythonUser

    monkeypatch.syspath_prepend(str(HERE))
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "u", "user": {"goal": "g"}}])
    agent = ConversationAgent(
        PythonAgent("_conv_agents:remembering"), PythonUser("_conv_agents:polite")
    )
    result = evaluate(cases, agent, out=tmp_path / "run")
    assert result is not None
    line = json.loads((tmp_path / "run" / "trials.jsonl").read_text().splitlines()[0])
    assert len(line["metadata"]["conversation"]["turns"]) == 3


def test_blank_replies_end_and_a_silent_user_fails_the_trial(tmp_path: Path) -> None:
    """A blank message ends the conversation like the stop phrase (it is never sent); a
    user with nothing to say at all fails the trial: no conversation took place."""
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "u", "user": {"goal": "g"}}])
    agent = ["--agent", "_conv_agents:remembering"]
    run("run", cases, *agent, "--user", "_conv_agents:blank_later", "--out", tmp_path / "a")
    line = by_case(tmp_path / "a")[("u", 0)]
    conv = line["metadata"]["conversation"]
    assert line["failure"] is None and conv["ended"] == "user_stop"
    assert [t["user"] for t in conv["turns"]] == ["hello"]
    assert [m["content"] for m in line["messages"] if m["role"] == "user"] == ["hello"]
    run("run", cases, *agent, "--user", "_conv_agents:silent", "--out", tmp_path / "b")
    failure = by_case(tmp_path / "b")[("u", 0)]["failure"]
    assert failure["cause"] == "user_simulator"
    assert "before its first message" in failure["message"]


@pytest.mark.parametrize("first", ["", "  ", "ok ###STOP###"])
def test_an_opening_that_would_end_the_conversation_is_refused(tmp_path: Path, first: str) -> None:
    cases = write_cases(
        tmp_path / "c.jsonl", [{"id": "u", "user": {"goal": "g", "first_message": first}}]
    )
    r = run("run", cases, "--agent", "_conv_agents:remembering", "--user", "_conv_agents:polite")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "c.jsonl:1" in lines[0] and "first_message" in lines[0], r.stderr
    assert "Traceback" not in r.stderr
