"""tool_call_match and the expected_calls grammar: values, matchers, options, modes, reasons."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agenteval.cases.case import Case
from agenteval.scorers import BUILTIN_SCORER_NAMES, builtin_scorers, tool_call_match
from agenteval.scorers.call_match import make_tool_call_match, match_calls
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial


def agenteval(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["AGENTEVAL_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _case(calls: Any, mode: str | None = None, **extra: Any) -> Case:
    return Case.model_validate(
        {"id": "c", "input": "q", "expected_calls": calls, "match_mode": mode, **extra}
    )


def _trial(*calls: tuple[str, Any], output: str | None = "ok") -> Trial:
    return Trial.model_validate(
        {
            "case_id": "c",
            "output": output,
            "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
        }
    )


def _score(calls: Any, made: list[tuple[str, Any]], mode: str | None = None) -> Score:
    return tool_call_match(_case(calls, mode), _trial(*made))


def _passes(arg_spec: Any, value: Any, **call_opts: Any) -> bool:
    spec = [{"name": "f", "arguments": {"x": arg_spec}, **call_opts}]
    return _score(spec, [("f", {"x": value})]).value == 1.0


WEATHER = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Oslo"}},
]


def test_the_reason_names_the_first_divergence() -> None:
    s = _score(WEATHER, [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Olso"})])
    assert s.value == pytest.approx(1 / 3) and s.passed is False
    assert s.reason == (
        "1 of 2 expected calls matched, 2 made (unordered): call 2: expected"
        " get_weather(city='Oslo'), got get_weather(city='Olso') — city differs"
    )


def test_registered_as_a_builtin() -> None:
    assert "tool_call_match" in BUILTIN_SCORER_NAMES
    assert any(f.name == "tool_call_match" for f in builtin_scorers())


def test_not_applicable_without_expected_calls_or_answer() -> None:
    plain = Case(id="c", input="q")
    assert tool_call_match(plain, _trial()).value is None
    assert "no expected_calls" in tool_call_match(plain, _trial()).reason
    crashed = _trial(("get_weather", {"city": "Paris"}), output=None)
    assert tool_call_match(_case(WEATHER), crashed).value is None


def test_no_call_expected() -> None:
    assert _score([], []).value == 1.0
    s = _score([], [("search", {"q": "x"})])
    assert s.value == 0.0 and "#1 search(q='x') was not expected" in s.reason


# --- plain values ------------------------------------------------------------------------


def test_strings_are_normalised_like_exact_match_by_default() -> None:
    assert _passes("Oslo", " oslo.")
    assert _passes("Café", "cafe")
    assert not _passes("Oslo", "Olso")
    assert _passes("Oslo", "Oslo", strings="exact")
    assert not _passes("Oslo", "oslo", strings="exact")
    assert _passes("New York, NY", "newyorkny", strings="bfcl")
    assert not _passes("New York", "newyorkny")


def test_numbers_loose_by_default_strict_on_request() -> None:
    assert _passes(10, 10.0)
    assert not _passes(10, 10.0, types="strict")
    assert _passes(10, 10, types="strict")
    assert not _passes(1, True) and not _passes(True, 1)
    assert not _passes(10, "10")
    assert not _passes("10", 10)
    assert _passes(None, None) and not _passes(None, 0)


def test_nested_objects_and_lists_match_recursively() -> None:
    spec = {"loc": {"lat": 59.9, "tags": ["a", "b"]}}
    assert _passes(spec, {"loc": {"lat": 59.9, "tags": ["A", "b"]}})
    assert not _passes(spec, {"loc": {"lat": 59.9, "tags": ["b", "a"]}})  # lists keep order
    assert not _passes(spec, {"loc": {"lat": 59.9, "tags": ["a"]}})
    assert not _passes(spec, {"loc": {"lat": 59.9, "tags": ["a", "b"], "x": 1}})
    assert _passes(spec, {"loc": {"lat": 59.9, "tags": ["a", "b"], "x": 1}}, extra_arguments=True)
    s = _score(
        [{"name": "f", "arguments": {"x": spec}}],
        [("f", {"x": {"loc": {"lat": 59.9, "tags": ["a", "c"]}}})],
    )
    assert s.reason.endswith("— x.loc.tags[1] differs")


# --- matchers ----------------------------------------------------------------------------


def test_any_of_regex_approx_present_python() -> None:
    assert _passes({"$any_of": ["NYC", "New York"]}, "new york")
    assert not _passes({"$any_of": ["NYC", "New York"]}, "Boston")
    assert _passes({"$regex": r"20\d\d-\d\d-\d\d"}, "2024-05-01")
    assert not _passes({"$regex": r"20\d\d"}, "x2024")  # the whole string must match
    assert not _passes({"$regex": ".*"}, 5)
    assert _passes({"$approx": 3.14, "$tolerance": 0.01}, 3.149)
    assert not _passes({"$approx": 3.14, "$tolerance": 0.01}, 3.16)
    assert not _passes({"$approx": 1}, True)
    assert _passes({"$present": True}, {"anything": [1]})
    assert _passes({"$python": "builtins:str.isupper"}, "OSLO")
    assert not _passes({"$python": "builtins:str.isupper"}, "Oslo")
    assert not _passes({"$python": "builtins:str.isupper"}, 5)  # raised: no match


def test_value_and_object_take_dollar_keys_literally() -> None:
    assert _passes({"$value": {"$ref": "x"}}, {"$ref": "x"})
    assert _passes({"$object": {"$ref": {"$regex": "x+"}}}, {"$ref": "xxx"})


def test_modifiers_per_argument_override_the_call() -> None:
    assert _passes({"$value": "Oslo", "$strings": "exact"}, "Oslo")
    assert not _passes({"$value": "Oslo", "$strings": "exact"}, "oslo")
    assert _passes({"$value": 10, "$types": "loose"}, 10.0, types="strict")
    assert _passes({"$value": {"a": 1}, "$extra": True}, {"a": 1, "b": 2})


def test_optional_and_extra_arguments() -> None:
    spec = [
        {"name": "f", "arguments": {"city": "Oslo", "units": {"$any_of": ["c"], "$optional": True}}}
    ]
    assert _score(spec, [("f", {"city": "Oslo"})]).value == 1.0
    assert _score(spec, [("f", {"city": "Oslo", "units": "c"})]).value == 1.0
    assert _score(spec, [("f", {"city": "Oslo", "units": "f"})]).reason.endswith("units differs")
    s = _score(spec, [("f", {"units": "c"})])
    assert s.reason.endswith("— city missing")
    s = _score(spec, [("f", {"city": "Oslo", "lang": "en"})])
    assert s.value == 0.0 and s.reason.endswith("— unexpected argument lang")
    spec[0]["extra_arguments"] = True
    assert _score(spec, [("f", {"city": "Oslo", "lang": "en"})]).value == 1.0
    raw = _score(spec, [("f", "not json {")])
    assert raw.value == 0.0 and "arguments are not a JSON object" in raw.reason


def test_name_matcher() -> None:
    spec = [{"name": {"$any_of": ["a", "b"]}, "arguments": {}}]
    assert _score(spec, [("b", {})]).value == 1.0
    assert _score(spec, [("B", {})]).value == 0.0  # names compare exactly


# --- modes -------------------------------------------------------------------------------

PAR, OSL, ROM = (("get_weather", {"city": c}) for c in ("Paris", "Oslo", "Rome"))


@pytest.mark.parametrize(
    ("mode", "made", "value"),
    [
        ("strict", [PAR, OSL], 1.0),
        ("strict", [OSL, PAR], 1 / 3),  # LCS 1 of 2 expected + 2 made - 1
        ("strict", [PAR, OSL, ROM], 2 / 3),
        ("unordered", [OSL, PAR], 1.0),
        ("unordered", [OSL, PAR, ROM], 2 / 3),
        ("unordered", [PAR], 1 / 2),
        ("subset", [ROM, OSL, PAR], 1.0),
        ("subset", [PAR, ROM], 1 / 2),
        ("superset", [OSL], 1.0),
        ("superset", [], 1.0),
        ("superset", [OSL, ROM], 1 / 2),
        ("in_order", [PAR, ROM, OSL], 1.0),
        ("in_order", [OSL, ROM, PAR], 1 / 2),
    ],
)
def test_modes(mode: str, made: list[tuple[str, Any]], value: float) -> None:
    s = _score(WEATHER, made, mode)
    assert s.value == pytest.approx(value), s.reason
    assert s.passed is (value == 1.0)


def test_mode_reasons() -> None:
    assert _score(WEATHER, [PAR, OSL, ROM], "strict").reason.endswith(
        "call 3: get_weather(city='Rome') was not expected"
    )
    assert _score(WEATHER, [PAR], "strict").reason.endswith(
        "call 2: expected get_weather(city='Oslo'), not made"
    )
    assert _score(WEATHER, [OSL, ROM], "superset").reason.endswith(
        "#2 get_weather(city='Rome') was not expected"
    )
    assert _score(WEATHER, [ROM, OSL, PAR], "subset").reason == (
        "2 of 2 expected calls matched (subset), 1 other calls allowed"
    )


def test_duplicate_expected_calls_count() -> None:
    twice = [WEATHER[0], WEATHER[0]]
    s = _score(twice, [PAR])
    assert s.value == 0.5 and "call 2: expected get_weather(city='Paris'), not made" in s.reason
    assert _score(twice, [PAR, PAR]).value == 1.0


def test_optimal_not_greedy_assignment() -> None:
    # A greedy first fit gives the "any city" call the Paris call and leaves Paris unmatched.
    spec = [
        {"name": "get_weather", "arguments": {"city": {"$present": True}}},
        WEATHER[0],
    ]
    assert _score(spec, [PAR, OSL]).value == 1.0
    assert match_calls(
        _case(spec).call_specs() or [], _trial(PAR, OSL).tool_calls, "unordered"
    ).pairs == (1, 0)


def test_suite_default_mode_and_case_override() -> None:
    strict = make_tool_call_match("strict")
    assert strict(_case(WEATHER), _trial(OSL, PAR)).value == pytest.approx(1 / 3)
    assert strict(_case(WEATHER, "unordered"), _trial(OSL, PAR)).value == 1.0
    with pytest.raises(ValueError, match="unknown match mode"):
        make_tool_call_match("sorted")


# --- validation at load ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"name": "f", "arguments": {"x": {"$regex": "("}}}, "argument 'x': $regex is not a valid"),
        ({"name": "f", "arguments": {"x": {"$approx": "a"}}}, "$approx must be a number"),
        ({"name": "f", "arguments": {"x": {"$any_of": 1}}}, "$any_of must be a list"),
        ({"name": "f", "arguments": {"x": {"$regex": "a", "$approx": 1}}}, "exactly one of"),
        ({"name": "f", "arguments": {"x": {"$optional": True}}}, "exactly one of"),
        ({"name": "f", "arguments": {"x": {"$nope": 1}}}, "unknown matcher key '$nope'"),
        ({"name": "f", "arguments": {"x": {"$present": True, "a": 1}}}, "mixes matcher keys"),
        ({"name": "f", "arguments": {"x": {"$python": "no_such_mod_zz:f"}}}, "cannot import"),
        ({"name": "f", "strings": "fuzzy"}, "'strings' must be one of"),
        ({"name": "f", "argumnts": {}}, "unknown key 'argumnts'"),
        ({"arguments": {}}, "'name' must be a non-empty string"),
    ],
)
def test_bad_specs_are_rejected(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match="expected_calls") as e:
        _case([spec])
    assert message in str(e.value)


def test_bad_matcher_in_a_dataset_exits_2_naming_file_line_field(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    good = {"id": "a", "input": "q", "expected_calls": WEATHER}
    bad = {
        "id": "b",
        "input": "q",
        "expected_calls": [{"name": "f", "arguments": {"d": {"$regex": "["}}}],
    }
    cases.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    trials = tmp_path / "trials.jsonl"
    trials.write_text(json.dumps({"case_id": "a", "output": ""}) + "\n")
    p = agenteval("score", str(cases), str(trials), "--out", str(tmp_path / "run"), cache=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "cases.jsonl:2" in p.stderr and "expected_calls" in p.stderr
    # the message docs/formats.md shows
    assert p.stderr.strip().endswith(
        "cases.jsonl:2: field 'expected_calls': call 1 (f), argument 'd': $regex"
        " is not a valid regular expression (unterminated character set at position 0)"
    )
    assert "Traceback" not in p.stderr and not (tmp_path / "run").exists()


def test_match_mode_is_validated() -> None:
    with pytest.raises(ValidationError, match="match_mode"):
        _case(WEATHER, "sorted")


def test_the_default_mode_is_a_recorded_setting() -> None:
    from agenteval.scorers import builtin_scorer

    strict = builtin_scorer("tool_call_match", {"mode": "strict"})
    assert strict.settings == {"mode": "strict"} and strict.ref == "builtin:tool_call_match"
    assert strict.kind == "graded"
    assert strict(_case(WEATHER), _trial(OSL, PAR)).value == pytest.approx(1 / 3)
    assert builtin_scorer("tool_call_match").settings == {}
    with pytest.raises(ValueError, match="unknown match mode"):
        builtin_scorer("tool_call_match", {"mode": "sorted"})
    with pytest.raises(ValueError, match="unknown setting"):
        builtin_scorer("tool_call_match", {"modes": "strict"})
