"""Trial files from anywhere: minimal records, provider tool-call shapes, precise errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.dataset.trialfile import iter_trial_file
from agenteval.errors import InputError
from agenteval.rundir import trial_line
from agenteval.scoring.score import Score
from agenteval.trials.trial import Latency, ToolCall, Trial, Usage


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def err(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        list(iter_trial_file(path))
    return info.value


def test_only_case_id_is_required(tmp_path: Path) -> None:
    (t,) = iter_trial_file(write(tmp_path / "t.jsonl", '{"case_id": "a"}\n'))
    assert t == Trial(case_id="a")
    assert (t.repeat, t.output, t.tool_calls, t.usage, t.failure) == (0, None, [], [], None)
    assert t.latency == Latency(total_s=None, active_s=None)


def test_tool_call_shapes(tmp_path: Path) -> None:
    row = {
        "case_id": 7,
        "output": "It is sunny.",
        "tool_calls": [
            {"name": "weather", "arguments": {"city": "Paris"}, "result": "sunny"},
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Rome"}'},
            },
            {"type": "tool_use", "id": "tu_1", "name": "search", "input": {"q": "x"}},
            {"name": "lookup", "args": {"k": 1}, "id": "lc_1"},
            {"name": "calc", "arguments": "{not json"},
        ],
        "usage": {"model": "m", "prompt_tokens": 10, "completion_tokens": 3},
        "latency": 1.5,
        "unknown_field": "ignored",
    }
    (t,) = iter_trial_file(write(tmp_path / "t.jsonl", jsonl([row])))
    assert t.case_id == "7"
    calls = t.tool_calls
    assert [c.name for c in calls] == ["weather", "weather", "search", "lookup", "calc"]
    assert calls[1] == ToolCall(id="call_1", name="weather", arguments={"city": "Rome"})
    assert calls[2].arguments == {"q": "x"} and calls[2].id == "tu_1"
    assert calls[3].arguments == {"k": 1}
    assert calls[4].arguments == "{not json" and not calls[4].arguments_valid_json
    assert t.usage == [Usage(model="m", input_tokens=10, output_tokens=3)]
    assert t.latency.total_s == 1.5


def test_json_array_and_run_lines_are_accepted(tmp_path: Path) -> None:
    stored = trial_line(Trial(case_id="a", output="x"), {"exact_match": Score(1.0, "equal")})
    (t,) = iter_trial_file(write(tmp_path / "trials.jsonl", stored))
    assert t.output == "x"
    p = write(tmp_path / "t.json", '[\n {"case_id": "a"},\n {"case_id": "a", "repeat": 1}\n]')
    assert [x.key for x in iter_trial_file(p)] == [("a", 0), ("a", 1)]
    e = err(write(tmp_path / "u.json", '[\n {"case_id": "a"},\n {"case_id": "a"}\n]'))
    assert e.line == 3 and "first at line 2" in e.message


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ('{"case_id": "a"}\n{"case_id": "b", \n', 2, None, "not valid JSON"),
        ('{"case_id": "a"}\n"just text"\n', 2, None, "must be an object, got a string"),
        ('{"output": "x"}\n', 1, "case_id", "is required"),
        ('{"case_id": ""}\n', 1, "case_id", "must not be empty"),
        ('{"case_id": null}\n', 1, "case_id", "must be a string"),
        ('{"case_id": "a", "tool_calls": {"name": "x"}}\n', 1, "tool_calls", "valid list"),
        (
            '{"case_id": "a", "tool_calls": [{"arguments": {}}]}\n',
            1,
            "tool_calls.0.name",
            "is required",
        ),
        ('{"case_id": "a", "tool_calls": ["x"]}\n', 1, "tool_calls.0", "an object (got 'x')"),
        ('{"case_id": "a", "repeat": -1}\n', 1, "repeat", "greater than or equal to 0"),
        ('{"case_id": "a", "repeat": "first"}\n', 1, "repeat", "valid integer"),
        ('{"case_id": "a", "output": ["x"]}\n', 1, "output", "valid string"),
        ('{"case_id": "a", "latency": {"total_s": NaN}}\n', 1, "latency.total_s", "NaN"),
        ('{"case_id": "a", "usage": [{"input_tokens": -5}]}\n', 1, "usage.0.input_tokens", "-5"),
        ('{"case_id": "a", "failure": {"message": "boom"}}\n', 1, "failure.cause", "required"),
        ('{"case_id": "a", "tools": [{"description": "no name"}]}\n', 1, "tools", "'name'"),
    ],
)
def test_errors_name_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None, words: str
) -> None:
    p = write(tmp_path / "t.jsonl", text)
    e = err(p)
    assert (e.file, e.line, e.field) == (str(p), line, field)
    assert words in e.message or words in str(e), str(e)


def test_duplicate_trial_names_both_lines(tmp_path: Path) -> None:
    rows = [{"case_id": "a"}, {"case_id": "b"}, {"case_id": "a", "repeat": 0}]
    e = err(write(tmp_path / "t.jsonl", jsonl(rows)))
    assert (e.line, e.field) == (3, "repeat")
    assert "duplicate trial for case_id 'a' repeat 0 (first at line 1)" in e.message


def test_file_level_errors(tmp_path: Path) -> None:
    assert err(write(tmp_path / "e.jsonl", "\n\n")).message == "contains no trials"
    e = err(write(tmp_path / "u.jsonl", b'{"case_id": "a", "output": "\xe9t\xe9"}\n'))
    assert e.line == 1 and "UTF-8" in e.message
    with pytest.raises(InputError, match="is a directory"):
        iter_trial_file(tmp_path)
    with pytest.raises(InputError, match="not found"):
        iter_trial_file(tmp_path / "nope.jsonl")


def test_streams_line_by_line(tmp_path: Path) -> None:
    it = iter_trial_file(write(tmp_path / "t.log", '{"case_id": "a"}\n{oops\n'))
    assert next(it).case_id == "a"
    with pytest.raises(InputError):
        next(it)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([".jsonl", ".json"]))
def test_random_bytes_raise_only_input_error(data: bytes, ext: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = write(Path(d) / f"t{ext}", data)
        try:
            for trial in iter_trial_file(p):
                assert isinstance(trial, Trial)
        except InputError as e:
            assert e.file == str(p)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_keys = st.sampled_from([*Trial.model_fields])
_call = st.dictionaries(
    st.sampled_from(["id", "name", "arguments", "function", "type", "input", "args", "result"]),
    _json,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(_keys, _json | st.lists(_call, max_size=2), max_size=6),
    st.text(min_size=1, max_size=4),
)
def test_random_records_raise_only_input_error(row: dict[str, Any], case_id: str) -> None:
    import tempfile

    row.setdefault("case_id", case_id)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.jsonl"
        p.write_text(jsonl([row]), encoding="utf-8")
        try:
            (trial,) = iter_trial_file(p)
            assert trial.case_id
        except InputError as e:
            assert e.file == str(p) and e.line == 1


def test_numbered_trials_give_the_start_line(tmp_path: Path) -> None:
    from agenteval.dataset.trialfile import iter_numbered_trials

    p = write(tmp_path / "t.jsonl", '\n{"case_id": "a"}\n\n{"case_id": "b"}\n')
    assert [(n, t.case_id) for n, t in iter_numbered_trials(p)] == [(2, "a"), (4, "b")]
