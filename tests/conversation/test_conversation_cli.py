"""Conversations through the real ``agenteval run``: scripted turns, a rule-based user,
per-trial state, repeats and pass^k (issue 18). Offline: Python agents and users."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conv_support import by_case, run, write_cases

from agenteval.rundir import read_header

STATE = {"sql": ["CREATE TABLE counter (n INTEGER)"], "tables": {"counter": [{"n": 0}]}}


def test_scripted_turns_whole_history_and_per_turn_scores(tmp_path: Path) -> None:
    cases = write_cases(
        tmp_path / "c.jsonl",
        [
            {
                "id": "chat",
                "turns": [
                    {"user": "hello", "must_contain": ["turn 0"]},
                    "how are you",
                    {"user": "bye", "must_contain": ["saw 5"], "expected": "nope"},
                ],
            }
        ],
    )
    out = tmp_path / "run"
    r = run("run", cases, "--agent", "_conv_agents:remembering", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    line = by_case(out)[("chat", 0)]
    conv = line["metadata"]["conversation"]
    assert conv["ended"] == "script_end"
    assert [t["user"] for t in conv["turns"]] == ["hello", "how are you", "bye"]
    # each call saw the whole history (1, 3, 5 messages) and the agent's own state per
    # conversation counted its calls
    outputs = [t["output"] for t in conv["turns"]]
    assert outputs == [
        "call 1 turn 0 saw 1: hello",
        "call 2 turn 1 saw 3: how are you",
        "call 3 turn 2 saw 5: bye",
    ]
    assert line["output"] == outputs[-1]
    assert [m["role"] for m in line["messages"]] == ["user", "assistant"] * 3
    assert all(t["latency_s"] >= 0 for t in conv["turns"])
    # per-turn expectations: turn 3 fails its exact expected, turn 1 passes
    s = line["scores"]["turn_expectations"]
    assert s["value"] == 0.5
    assert s["reason"].startswith("1/2 turns meet their expectations: turn 3: exact_match:")
    assert line["scores"]["state_match"]["status"] == "not_applicable"


def test_rule_based_user_stops_and_max_turns(tmp_path: Path) -> None:
    rows = [
        {"id": "stops", "user": {"goal": "chat", "facts": {"ask": "hi"}}},
        {"id": "capped", "user": {"goal": "chat", "max_turns": 2, "first_message": "first"}},
    ]
    cases = write_cases(tmp_path / "c.jsonl", rows)
    out = tmp_path / "run"
    r = run(
        "run", cases, "--agent", "_conv_agents:remembering", "--user", "_conv_agents:polite",
        "--out", out, "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = by_case(out)
    stops = got[("stops", 0)]["metadata"]["conversation"]
    assert [t["user"] for t in stops["turns"]] == ["hi #1", "hi #2", "hi #3"]
    assert stops["ended"] == "user_stop"
    assert stops["user"]["stop_message"] == "thanks ###STOP###"
    capped = got[("capped", 0)]["metadata"]["conversation"]
    assert [t["user"] for t in capped["turns"]] == ["first", "hello #2"]
    assert capped["ended"] == "max_turns"
    header = read_header(out)
    assert header.agent["user"] == {"kind": "python", "target": "_conv_agents:polite"}


def test_user_problems_fail_the_trial_with_their_cause(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "u", "user": {"goal": "g"}}])
    no_user = run("run", cases, "--agent", "_conv_agents:remembering", "--out", tmp_path / "a")
    assert no_user.returncode == 4  # no trial got an answer
    failure = by_case(tmp_path / "a")[("u", 0)]["failure"]
    assert failure["cause"] == "user_simulator"
    assert "pass --user MODULE:FN or --user-endpoint" in failure["message"]
    broken = run(
        "run", cases, "--agent", "_conv_agents:remembering", "--user", "_conv_agents:broken",
        "--out", tmp_path / "b",
    )  # fmt: skip
    failure = by_case(tmp_path / "b")[("u", 0)]["failure"]
    assert failure == {
        "cause": "user_simulator",
        "message": "the simulated user raised RuntimeError: the user script broke",
    }
    assert "Traceback" not in broken.stderr


def test_per_trial_state_repeats_and_pass_k(tmp_path: Path) -> None:
    """Every repeat starts from its own copy of initial_state, even run concurrently."""
    cases = write_cases(
        tmp_path / "c.jsonl",
        [
            {
                "id": "count",
                "turns": ["add", "add", "add"],
                "initial_state": STATE,
                "expected_state": {
                    "tables": {"counter": [{"n": 3}]},
                    "queries": [{"sql": "SELECT n FROM counter", "expected": 3}],
                },
                "procedure": [{"tool": "increment", "never": True}],
            },
            {
                "id": "wrong",
                "turns": ["add"],
                "initial_state": STATE,
                "expected_state": {"tables": {"counter": [{"n": 2}]}},
            },
            {
                "id": "flaky",
                "turns": ["add", "add"],
                "initial_state": STATE,
                "expected_state": {"tables": {"counter": [{"n": 2}]}},
            },
        ],
    )
    out = tmp_path / "run"
    r = run(
        "run", cases, "--agent", "_conv_agents:counter", "--repeats", "4", "--concurrency", "4",
        "--out", out, "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = by_case(out)
    for k in range(4):
        line = got[("count", k)]
        assert [t["output"] for t in line["metadata"]["conversation"]["turns"]] == [
            "n=1",
            "n=2",
            "n=3",
        ]
        assert line["metadata"]["state"]["tables"]["counter"] == {"columns": ["n"], "rows": [[3]]}
        assert line["scores"]["state_match"]["status"] == "passed"
        assert line["scores"]["procedure"]["reason"].startswith("3 procedure violation(s)")
        assert [c["name"] for c in line["tool_calls"]] == ["increment"] * 3
        assert line["metadata"]["conversation"]["turns"][2]["calls"] == [2, 3]
        wrong = got[("wrong", k)]["scores"]["state_match"]
        assert wrong["reason"] == (
            "final state differs: table counter: missing (n=2); unexpected (n=1)"
        )
    assert got[("flaky", 1)]["scores"]["state_match"]["status"] == "failed"
    # pass^k over the repeats of each conversation: count 4/4, wrong 0/4, flaky 3/4
    summary = read_header(out).summary
    assert summary is not None
    rep = summary["repeats"]
    assert rep["k"] == 4
    sm = rep["scorers"]["state_match"]
    assert (sm["cases"], sm["pass_at_1"], sm["pass_at_k"], sm["pass_hat_k"]) == (
        3,
        (4 + 0 + 3) / 12,
        2 / 3,
        1 / 3,
    )
    assert [f["case_id"] if isinstance(f, dict) else f for f in rep["flaky"]] == ["flaky"]


def test_old_runs_and_single_turn_cases_are_unchanged(tmp_path: Path) -> None:
    """A case without turns, user or state is one plain call: no conversation record."""
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "q", "input": "hi"}])
    out = tmp_path / "run"
    r = run("run", cases, "--agent", "_conv_agents:remembering", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    line: dict[str, Any] = by_case(out)[("q", 0)]
    assert "conversation" not in line["metadata"] and "state" not in line["metadata"]
    assert line["output"] == "call 1 turn None saw 1: hi"
    assert "user" not in read_header(out).agent
