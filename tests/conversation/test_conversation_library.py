"""``evaluate(user=...)``: the simulated users of ``agenteval run --user`` /
``--user-endpoint`` from Python, recorded the same way, in this process or on workers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conv_support import HERE, ThreadedFake, run, write_cases

from agenteval import InputError, evaluate, llm_user
from agenteval.agents.python import PythonAgent
from agenteval.conversation.agent import ConversationAgent
from agenteval.conversation.users import PythonUser
from agenteval.rundir import read_header

ROWS = [
    {"id": "a", "user": {"goal": "g", "facts": {"ask": "hi"}}},
    {"id": "b", "user": {"goal": "g", "facts": {"ask": "yo"}}},
]


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


def _conversations(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(x) for x in (run_dir / "trials.jsonl").read_text().splitlines() if x]
    return {x["case_id"]: x["metadata"]["conversation"] for x in lines}


def _users(conv: dict[str, Any]) -> list[str]:
    return [t["user"] for t in conv["turns"]]


@pytest.mark.parametrize("processes", [None, 2])
def test_a_rule_based_user_by_path_as_the_cli_records_it(
    tmp_path: Path, processes: int | None
) -> None:
    cases = write_cases(tmp_path / "c.jsonl", ROWS)
    lib = evaluate(
        cases,
        "_conv_agents:remembering",
        user="_conv_agents:polite",
        processes=processes,
        out=tmp_path / "lib",
    )
    convs = _conversations(lib.run_dir)
    assert _users(convs["a"]) == ["hi #1", "hi #2", "hi #3"]
    assert _users(convs["b"]) == ["yo #1", "yo #2", "yo #3"]
    assert convs["a"]["ended"] == "user_stop"
    cli = run(
        "run", cases, "--agent", "_conv_agents:remembering", "--user", "_conv_agents:polite",
        "--out", tmp_path / "cli", "--quiet",
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    expected = {"kind": "python", "target": "_conv_agents:polite"}
    assert read_header(lib.run_dir).agent["user"] == expected
    assert read_header(tmp_path / "cli").agent["user"] == expected


def test_a_callable_user_and_a_file_user_travel_to_workers(tmp_path: Path) -> None:
    import _conv_agents

    cases = write_cases(tmp_path / "c.jsonl", ROWS)
    r = evaluate(
        cases, "_conv_agents:remembering", user=_conv_agents.polite, processes=2, out=tmp_path / "f"
    )
    assert read_header(r.run_dir).agent["user"]["target"] == "_conv_agents:polite"
    assert _users(_conversations(r.run_dir)["b"]) == ["yo #1", "yo #2", "yo #3"]
    # a user in a file of its own (not the agent's): each worker imports that file
    src = (HERE / "_conv_agents.py").read_text(encoding="utf-8")
    (tmp_path / "my_user.py").write_text(src, encoding="utf-8")
    target = f"{tmp_path / 'my_user.py'}:polite"
    r = evaluate(cases, "_conv_agents:remembering", user=target, processes=2, out=tmp_path / "file")
    assert _users(_conversations(r.run_dir)["a"]) == ["hi #1", "hi #2", "hi #3"]


def test_a_user_that_cannot_travel_is_refused_before_the_run(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.jsonl", ROWS)

    def nested(user: Any, history: list[dict[str, Any]]) -> str | None:
        return None if history else "hi"

    with pytest.raises(InputError) as e:
        evaluate(cases, "_conv_agents:remembering", user=nested, processes=2, out=tmp_path / "r")
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("the simulated user '")
    assert "nested' cannot be sent to worker processes" in message
    assert not (tmp_path / "r").exists()
    # in this process the same function is fine
    r = evaluate(cases, "_conv_agents:remembering", user=nested, out=tmp_path / "here")
    assert _conversations(r.run_dir)["a"]["ended"] == "user_stop"


def test_bad_users_and_a_user_given_twice_are_input_errors(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.jsonl", ROWS)
    with pytest.raises(InputError, match=r"field 'user'.*got int"):
        evaluate(cases, "_conv_agents:remembering", user=3, out=tmp_path / "r")
    with pytest.raises(InputError, match="has no attribute 'nope'"):
        evaluate(cases, "_conv_agents:remembering", user="_conv_agents:nope")
    both = ConversationAgent(
        PythonAgent("_conv_agents:remembering"), PythonUser("_conv_agents:polite")
    )
    with pytest.raises(InputError, match="give the user once"):
        evaluate(cases, both, user="_conv_agents:polite")
    with pytest.raises(InputError, match="field 'retries'"):
        llm_user("http://127.0.0.1:9/v1", "m", retries=-1)
    # a ConversationAgent without a user takes the one given
    plain = ConversationAgent(PythonAgent("_conv_agents:remembering"))
    r = evaluate(cases, plain, user="_conv_agents:polite", out=tmp_path / "plain")
    assert read_header(r.run_dir).agent["user"]["target"] == "_conv_agents:polite"


@pytest.mark.parametrize("processes", [None, 2])
def test_an_llm_user_through_the_fake_server(tmp_path: Path, processes: int | None) -> None:
    rows = [{"id": "u", "user": {"goal": "get help", "max_turns": 2}}]
    cases = write_cases(tmp_path / "c.jsonl", rows)
    cache = tmp_path / "cache"
    with ThreadedFake() as srv:
        user = llm_user(srv.base_url, "sim-model", cache=cache)
        lib = evaluate(
            cases, "_conv_agents:remembering", user=user, processes=processes, out=tmp_path / "lib"
        )
        asked = srv.counts()
        evaluate(
            cases, "_conv_agents:remembering", user=user, processes=processes, out=tmp_path / "b"
        )
        asked_again = srv.counts()
        cli = run(
            "run", cases, "--agent", "_conv_agents:remembering", "--user-endpoint",
            srv.base_url, "--user-model", "sim-model", "--no-user-cache",
            "--out", tmp_path / "cli", "--quiet",
        )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert asked == {"ok": 2} and asked_again == asked  # the second run: from the cache
    conv = _conversations(lib.run_dir)["u"]
    assert conv["ended"] == "max_turns"
    assert _users(conv)[0] == "echo: (The agent is waiting. Write your first message.)"
    assert _users(conv)[1].startswith("echo: [BEGIN agent FENCE-")  # the agent's text fenced
    assert conv["user"]["kind"] == "llm" and conv["user"]["usage"][0]["model"] == "sim-model"
    assert _users(_conversations(tmp_path / "b")["u"]) == _users(conv)
    header = read_header(lib.run_dir).agent["user"]
    assert header == read_header(tmp_path / "cli").agent["user"]
    assert header == {"kind": "llm", "base_url": srv.base_url, "model": "sim-model",
                      "temperature": 0.0}  # fmt: skip
