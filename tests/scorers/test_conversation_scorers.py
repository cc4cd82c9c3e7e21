"""state_match, procedure and turn_expectations: exact semantics, n/a cases, properties."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.cases.conversation import ExpectedState, InitialState
from agenteval.conversation.state import build, snapshot
from agenteval.scorers import procedure, state_match, turn_expectations
from agenteval.scorers.conversation import check_state
from agenteval.trials.trial import Trial

cells = st.one_of(st.integers(-1000, 1000), st.text("abcxyz ", max_size=6), st.none())
rows_st = st.lists(st.tuples(cells, cells), min_size=0, max_size=6)


def _snap(rows: list[tuple[Any, ...]], columns: tuple[str, ...] = ("a", "b")) -> dict[str, Any]:
    return {"tables": {"t": {"columns": list(columns), "rows": [list(r) for r in rows]}}}


def _trial(state: dict[str, Any] | None, **kw: Any) -> Trial:
    meta = {"state": state} if state is not None else {}
    return Trial(case_id="c", output=kw.pop("output", "ok"), metadata=meta, **kw)


def _case(**kw: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "q", **kw})


@settings(max_examples=60, deadline=None)
@given(rows=rows_st, data=st.data())
def test_state_match_ignores_row_order_and_unnamed_columns(rows: list[Any], data: Any) -> None:
    shuffled = data.draw(st.permutations(rows))
    expected = [{"a": a} for a, _ in shuffled]  # only column a is named
    case = _case(expected_state={"tables": {"t": expected}})
    assert state_match(case, _trial(_snap(rows))).value == 1.0


@settings(max_examples=60, deadline=None)
@given(rows=rows_st.filter(bool), data=st.data())
def test_state_match_fails_on_any_changed_cell(rows: list[Any], data: Any) -> None:
    i = data.draw(st.integers(0, len(rows) - 1))
    a, b = rows[i]
    changed = list(rows)
    changed[i] = (a, "different" if b != "different" else "other")
    expected = [{"a": x, "b": y} for x, y in changed]
    case = _case(expected_state={"tables": {"t": expected}})
    score = state_match(case, _trial(_snap(rows)))
    assert score.value == 0.0 and score.reason.startswith("final state differs: table t:")


@settings(max_examples=40, deadline=None)
@given(rows=rows_st)
def test_built_state_snapshots_back_to_itself(rows: list[Any]) -> None:
    """initial_state -> SQLite -> snapshot equals the rows given (the recorded state)."""
    table = [{"a": a, "b": b} for a, b in rows] or [{"a": 0, "b": 0}]
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "s.db"
        build(db, InitialState(tables={"t": table}))
        snap = snapshot(db)
    assert snap["tables"]["t"]["rows"] == [[r["a"], r["b"]] for r in table]
    assert check_state(ExpectedState(tables={"t": table}), snap) == []


def test_state_match_queries_numbers_and_missing_things() -> None:
    snap = _snap([(1, "x"), (2, "y")])
    ok = _case(
        expected_state={
            "queries": [
                {"sql": "SELECT count(*) FROM t", "expected": 2.0},
                {"sql": "SELECT b FROM t ORDER BY a", "expected": ["x", "y"]},
            ]
        }
    )
    assert state_match(ok, _trial(snap)).reason == "final state matches (2 checks)"
    order = _case(expected_state={"queries": [{"sql": "SELECT b FROM t", "expected": ["y", "x"]}]})
    assert state_match(order, _trial(snap)).value == 0.0  # query results compare in order
    bad = _case(expected_state={"queries": [{"sql": "SELECT nope FROM t", "expected": 1}]})
    assert (
        "failed on the final state: no such column: nope" in state_match(bad, _trial(snap)).reason
    )
    gone = _case(expected_state={"tables": {"u": [{"a": 1}], "t": [{"c": 1}]}})
    assert state_match(gone, _trial(snap)).reason == (
        "final state differs: table u does not exist in the final state; table t has no column c"
    )


def test_state_match_not_applicable_and_inconclusive() -> None:
    has = _case(expected_state={"tables": {"t": []}})
    assert state_match(_case(), _trial(None)).status == "not_applicable"
    failed = Trial(case_id="c", output=None, failure={"cause": "timeout"})
    assert state_match(has, failed).reason == "agent never answered (failure: timeout)"
    assert state_match(has, _trial(None)).status == "inconclusive"


# -- procedure ---------------------------------------------------------------------------

TOOLS = ("read", "write")
turn_st = st.tuples(st.sampled_from(["yes please", "no", "do it"]), st.lists(
    st.tuples(st.sampled_from(TOOLS), st.booleans()), max_size=3))  # fmt: skip


def _conversation(turns: list[tuple[str, list[tuple[str, bool]]]]) -> tuple[Case, Trial]:
    calls, record = [], []
    for user, made in turns:
        start = len(calls)
        calls += [{"name": n, "arguments": {}, "error": None if ok else "boom"} for n, ok in made]
        record.append({"user": user, "output": "ok", "calls": [start, len(calls)]})
    case = Case.model_validate({"id": "c", "turns": [u for u, _ in turns] or ["hi"]})
    trial = Trial(
        case_id="c", output="ok", tool_calls=calls, metadata={"conversation": {"turns": record}}
    )
    return case, trial


def _with_rules(case: Case, rules: list[dict[str, Any]]) -> Case:
    return Case.model_validate({**case.model_dump(exclude_defaults=True), "procedure": rules})


@settings(max_examples=150, deadline=None)
@given(turns=st.lists(turn_st, min_size=1, max_size=5))
def test_procedure_matches_a_simple_oracle(turns: list[Any]) -> None:
    case, trial = _conversation(turns)
    writes = [(u, ok) for u, made in turns for n, ok in made if n == "write"]
    # after_user: every write in a turn whose user message matches
    confirm = procedure(_with_rules(case, [{"tool": "write", "after_user": "^yes"}]), trial)
    assert confirm.passed == all(u.startswith("yes") for u, _ in writes)
    # never
    never = procedure(_with_rules(case, [{"tool": "write", "never": True}]), trial)
    assert never.passed == (not writes)
    # after_call: a successful read before the first write
    flat = [(n, ok) for _, made in turns for n, ok in made]
    first_write = next((i for i, (n, _) in enumerate(flat) if n == "write"), None)
    first_read = next((i for i, (n, ok) in enumerate(flat) if n == "read" and ok), None)
    expected = first_write is None or (first_read is not None and first_read < first_write)
    after = procedure(_with_rules(case, [{"tool": "write", "after_call": "read"}]), trial)
    assert after.passed == expected
    assert after.value in (0.0, 1.0)


def test_procedure_single_turn_and_not_applicable() -> None:
    case = _case(procedure=[{"tool": "write", "after_user": "confirm"}])
    trial = Trial(case_id="c", output="ok", tool_calls=[{"name": "write", "arguments": {}}])
    assert procedure(case, trial).reason == (
        '1 procedure violation(s): call #1 write in turn 1 after user message "q", which'
        " does not match 'confirm'"
    )
    assert procedure(_case(), trial).status == "not_applicable"
    none_made = Trial(case_id="c", output="ok")
    assert procedure(case, none_made).reason == "every call follows the 1 procedure rule(s)"
    failed = Trial(
        case_id="c", output=None, failure={"cause": "timeout"}, tool_calls=[{"name": "write"}]
    )
    assert procedure(case, failed).value == 0.0  # calls of a failed trial are still checked


# -- turn_expectations ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(flags=st.lists(st.booleans(), min_size=1, max_size=6))
def test_turn_expectations_value_is_the_share_of_turns_passing(flags: list[bool]) -> None:
    turns = [{"user": f"q{i}", "must_contain": ["good"]} for i in range(len(flags))]
    case = Case.model_validate({"id": "c", "turns": turns})
    record = [
        {"user": f"q{i}", "output": "good" if ok else "bad", "calls": [0, 0]}
        for i, ok in enumerate(flags)
    ]
    trial = Trial(
        case_id="c", output=record[-1]["output"], metadata={"conversation": {"turns": record}}
    )
    score = turn_expectations(case, trial)
    assert score.value == sum(flags) / len(flags)
    assert score.passed == all(flags)


def test_turn_expectations_unreached_turns_fail_and_na() -> None:
    case = Case.model_validate({"id": "c", "turns": ["a", {"user": "b", "expected": "B"}]})
    short = Trial(
        case_id="c",
        output="x",
        metadata={"conversation": {"turns": [{"user": "a", "output": "x", "calls": [0, 0]}]}},
    )
    assert turn_expectations(case, short).reason == (
        "0/1 turns meet their expectations: turn 2: never reached"
    )
    plain = Case.model_validate({"id": "c", "turns": ["a", "b"]})
    assert turn_expectations(plain, short).status == "not_applicable"
    assert turn_expectations(_case(), short).reason == "case has no turn with expectations"
