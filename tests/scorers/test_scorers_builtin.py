"""The built-in scorer set, and properties every built-in scorer keeps on random input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.scorers import (
    BUILTIN_SCORER_NAMES,
    SAFETY_SCORERS,
    builtin_scorers,
    redundant_calls,
    step_efficiency,
)
from agenteval.scoring.apply import Scorers
from agenteval.scoring.spec import scorer_name, scorer_threshold
from agenteval.trials.trial import Trial

SUITE = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]


def test_names_and_order() -> None:
    fns = builtin_scorers()
    assert [scorer_name(f) for f in fns] == list(BUILTIN_SCORER_NAMES)
    assert len(set(BUILTIN_SCORER_NAMES)) == 16
    assert set(SAFETY_SCORERS) <= set(BUILTIN_SCORER_NAMES)
    configured = builtin_scorers(suite_tools=SUITE, pii_kinds=["email"])
    assert [scorer_name(f) for f in configured] == list(BUILTIN_SCORER_NAMES)
    assert Scorers(fns).names == list(BUILTIN_SCORER_NAMES)


def test_thresholds() -> None:
    thresholds = {scorer_name(f): scorer_threshold(f) for f in builtin_scorers()}
    assert thresholds.pop("step_efficiency") == 0.5
    assert set(thresholds.values()) == {1.0}


def test_every_scorer_documents_itself() -> None:
    for fn in builtin_scorers(suite_tools=SUITE, pii_kinds=["email"]):
        doc = fn.__doc__ or ""
        assert "applicable" in doc and "threshold" in doc.lower(), scorer_name(fn)


def test_suite_tools_reach_argument_validation() -> None:
    case = Case(id="c", input="q")
    t = Trial.model_validate({"case_id": "c", "output": "x", "tool_calls": [{"name": "nope"}]})
    scores = Scorers(builtin_scorers(suite_tools=SUITE)).apply(case, t)
    assert scores["tool_arguments_valid"].reason == "1 of 1 calls invalid: #1 nope: unknown tool"
    assert Scorers(builtin_scorers()).apply(case, t)["tool_arguments_valid"].value is None


def test_bad_suite_tools_are_a_value_error() -> None:
    with pytest.raises(ValueError):
        builtin_scorers(suite_tools=[{"description": "no name"}])


# --- properties on random cases and trials ----------------------------------------------

_names = st.sampled_from(["search", "lookup", "calc", "Search"])
_texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["19,753", "19753.0", "Paris.", "doc-1 doc-12", "a@b.io", "4111 1111 1111 1111", ""]
    ),
)
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abq"), inner, max_size=3)
    ),
    max_leaves=6,
)
_tool_def = st.fixed_dictionaries(
    {
        "name": _names,
        "parameters": st.sampled_from(
            [
                {"type": "object"},
                {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
                {"type": "object", "additionalProperties": False},
                {"type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}]}}},
            ]
        ),
    }
)
_tool_defs = st.lists(_tool_def, max_size=3, unique_by=lambda d: d["name"])
_call = st.fixed_dictionaries(
    {"name": _names},
    optional={
        "arguments": st.one_of(_json, st.just('{"q": '), st.text(max_size=10)),
        "result": _json,
        "error": st.one_of(st.none(), st.text(max_size=20)),
    },
)
_cases = st.fixed_dictionaries(
    {"id": st.just("c"), "input": st.one_of(_texts.filter(bool), st.just("What in 2023?"))},
    optional={
        "expected": st.one_of(
            _texts, st.integers(), st.floats(allow_nan=False, allow_infinity=False)
        ),
        "expected_tools": st.one_of(
            st.lists(_names, max_size=3), st.dictionaries(_names, st.integers(0, 3))
        ),
        "expected_trajectory": st.lists(_names, max_size=3),
        "max_tool_calls": st.integers(0, 5),
        "relevant_docs": st.lists(st.sampled_from(["doc-1", "doc-12", "a.b", "12"]), max_size=3),
        "must_not_contain": st.lists(_texts, max_size=3),
        "canary": st.lists(_texts, max_size=2),
        "tools": _tool_defs,
    },
)
_trials = st.fixed_dictionaries(
    {"case_id": st.just("c"), "output": st.one_of(st.none(), _texts)},
    optional={
        "tool_calls": st.lists(_call, max_size=5),
        "failure": st.fixed_dictionaries({"cause": st.sampled_from(["timeout", "agent_error"])}),
        "tools": _tool_defs,
    },
)

_ALL = builtin_scorers(suite_tools=SUITE)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_cases, _trials)
def test_every_scorer_returns_a_value_in_range_or_none_and_never_raises(
    raw_case: dict[str, Any], raw_trial: dict[str, Any]
) -> None:
    case = Case.model_validate(raw_case)
    trial = Trial.model_validate(raw_trial)
    for fn in _ALL:
        s = fn(case, trial)
        assert s.value is None or (0.0 <= s.value <= 1.0 and not math.isnan(s.value))
        assert s.reason, scorer_name(fn)
        assert s.error is None
        if trial.output is None and scorer_name(fn) in (
            "exact_match",
            "tool_selection",
            "trajectory_order",
            "tool_faithfulness",
            "tool_grounding",
            "avoids_forbidden_text",
            "pii_leakage",
        ):
            assert s.value is None


@given(_cases, st.lists(_call, max_size=8))
def test_step_efficiency_never_above_one(raw_case: dict[str, Any], calls: list[Any]) -> None:
    trial = Trial.model_validate({"case_id": "c", "output": "x", "tool_calls": calls})
    s = step_efficiency(Case.model_validate(raw_case), trial)
    assert s.value is None or 0.0 <= s.value <= 1.0


@given(st.lists(st.tuples(_names, _json, st.one_of(st.none(), st.just("boom"))), max_size=6))
def test_redundant_calls_never_fail_without_equal_arguments(
    calls: list[tuple[str, Any, str | None]],
) -> None:
    trial = Trial.model_validate(
        {
            "case_id": "c",
            "output": "x",
            "tool_calls": [{"name": n, "arguments": a, "error": e} for n, a, e in calls],
        }
    )
    made = [(c.name, c.arguments) for c in trial.tool_calls]
    if any(made[i] == made[j] for i in range(len(made)) for j in range(i)):
        return  # some two calls are equal: the property says nothing
    s = redundant_calls(Case(id="c", input="q"), trial)
    assert s.value in (None, 1.0)


def test_builtin_specs_name_kind_threshold_safety_and_rebuild_the_same_scorer() -> None:
    from agenteval.scorers import builtin_scorer

    defs = [{"name": "get", "parameters": {"type": "object", "properties": {}}}]
    scorers = builtin_scorers(suite_tools=defs, pii_kinds=["phone", "email"])
    specs = {s.name: s.spec for s in scorers}
    assert list(specs) == list(BUILTIN_SCORER_NAMES)
    assert {n for n, s in specs.items() if s.safety} == set(SAFETY_SCORERS)
    assert specs["step_efficiency"].kind == "graded" and specs["exact_match"].kind == "pass/fail"
    assert specs["pii_leakage"].settings == {"kinds": ["email", "phone"]}  # detection order
    assert specs["tool_execution"].settings["tools"][0]["name"] == "get"
    case = Case(id="c", input="q")
    trial = Trial(case_id="c", output="mail me at a@b.example or call +1 415 555 0100")
    for s in scorers:
        spec = specs[s.name]
        assert spec.ref == f"builtin:{s.name}"
        again = builtin_scorer(s.name, spec.settings)
        assert again.spec == spec
        assert again(case, trial) == s(case, trial)


def test_builtin_scorer_refuses_unknown_names_and_settings() -> None:
    from agenteval.scorers import builtin_scorer

    with pytest.raises(ValueError, match="unknown built-in scorer"):
        builtin_scorer("nope")
    with pytest.raises(ValueError, match="unknown setting"):
        builtin_scorer("exact_match", {"kinds": ["email"]})
    with pytest.raises(ValueError, match="unknown"):
        builtin_scorer("pii_leakage", {"kinds": ["dna"]})
