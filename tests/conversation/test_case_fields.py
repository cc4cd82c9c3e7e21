"""The conversation fields of a case: validated like every other field (file, line,
field, one line, exit 2), and the derived ``input``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conv_support import run

from agenteval.cases.case import Case
from agenteval.dataset import canonical_case_json, scan_dataset
from agenteval.errors import InputError

BAD = [
    ({"id": "a", "turns": [{"user": "hi", "expectd": 1}]}, "field 'turns.0.expectd': Extra inputs"),
    ({"id": "b", "user": {"goal": "x", "max_turns": 0}}, "field 'user.max_turns': must be greater"),
    ({"id": "c", "turns": ["hi"], "user": {"goal": "x"}}, "give 'turns' (a script) or 'user'"),
    ({"id": "d", "input": "other", "turns": ["hi"]}, "input: leave it out of a conversation"),
    (
        {
            "id": "e",
            "input": "q",
            "expected_state": {"queries": [{"sql": "DELETE FROM t", "expected": 1}]},
        },
        "field 'expected_state.queries.0.sql': must be a SELECT",
    ),
    (
        {"id": "f", "input": "q", "procedure": [{"tool": "x", "after_user": "("}]},
        "field 'procedure.0.after_user': not a valid regular expression",
    ),
    (
        {"id": "g", "input": "q", "procedure": [{"tool": "x", "never": True, "after_call": "y"}]},
        "give exactly one of after_user, after_call, never: true",
    ),
    (
        {"id": "h", "input": "q", "initial_state": {"tables": {"t": [{"a b": 1}]}}},
        "field 'initial_state.tables': table 't' row 0: column 'a b' is not a plain name",
    ),
    ({"id": "i", "input": "q", "initial_state": {}}, "give 'sql' (statements) and/or 'tables'"),
    ({"id": "j", "turns": []}, "turns: must be a non-empty list of user messages"),
    (
        {"id": "k", "turns": [{"user": "hi", "expected_calls": [{"name": 3}]}]},
        "field 'turns.0.expected_calls': call 1: 'name' must be a non-empty string",
    ),
    ({"id": "l", "user": {"goal": "x", "moood": "calm"}}, "field 'user.moood': Extra inputs"),
]


@pytest.mark.parametrize(("row", "message"), BAD, ids=[r["id"] for r, _ in BAD])
def test_bad_conversation_fields_name_file_line_and_field(
    tmp_path: Path, row: dict[str, object], message: str
) -> None:
    p = tmp_path / "cases.jsonl"
    p.write_text(json.dumps({"id": "ok", "turns": ["hi"]}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(InputError) as e:
        scan_dataset(p)
    text = str(e.value)
    assert text.startswith(f"{p}:2: ") and message in text, text
    assert "\n" not in text


def test_cli_exit_2_before_any_agent_call(tmp_path: Path) -> None:
    p = tmp_path / "cases.jsonl"
    p.write_text(json.dumps(BAD[1][0]) + "\n")
    r = run("run", p, "--agent", "_conv_agents:remembering", "--out", tmp_path / "run")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith(f"agenteval: error: {p}:1:")
    assert "Traceback" not in r.stderr


def test_input_is_derived_and_round_trips() -> None:
    scripted = Case.model_validate({"id": "s", "turns": ["hello", {"user": "yes"}]})
    assert scripted.input == "hello" and scripted.conversational
    simulated = Case.model_validate({"id": "u", "user": {"goal": "buy a lamp"}})
    assert simulated.input == "buy a lamp"
    opened = Case.model_validate({"id": "o", "user": {"goal": "g", "first_message": "hi!"}})
    assert opened.input == "hi!" and opened.user is not None and opened.user.stop == "###STOP###"
    for case in (scripted, simulated, opened):  # the run's snapshot reads back the same case
        again = Case.model_validate_json(canonical_case_json(case))
        assert again == case
    plain = Case.model_validate({"id": "p", "input": "q"})
    assert not plain.conversational and plain.turns is None
    assert canonical_case_json(plain) == '{"id":"p","input":"q"}'  # old datasets hash the same
