from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import STATUSES, Score, inconclusive, normalize_result, not_applicable
from agenteval.scoring.spec import scorer, scorer_name, scorer_threshold
from agenteval.trials.trial import Trial


def test_score_rejects_out_of_range_and_nan() -> None:
    with pytest.raises(ValueError):
        Score(1.5, "x")
    with pytest.raises(ValueError):
        Score(math.nan, "x")
    with pytest.raises(TypeError):
        Score(True, "x")  # type: ignore[arg-type]


def test_passed_uses_threshold_and_none_when_not_applicable() -> None:
    assert Score(0.5, "", threshold=0.5).passed is True
    assert Score(0.49, "", threshold=0.5).passed is False
    assert Score(None, "n/a").passed is None


@pytest.mark.parametrize(
    ("raw", "value", "error"),
    [
        (True, 1.0, False),
        (False, 0.0, False),
        (0.25, 0.25, False),
        (1, 1.0, False),
        ((0.5, "half"), 0.5, False),
        ((None, "does not apply"), None, False),
        (None, None, False),
        (Score(0.7, "given"), 0.7, False),
        (1.5, None, True),
        (-0.1, None, True),
        (float("nan"), None, True),
        ("good", None, True),
        ((1, 2, 3), None, True),
        ({"value": 1}, None, True),
    ],
)
def test_normalize_result(raw: object, value: float | None, error: bool) -> None:
    s = normalize_result(raw)
    assert s.value == value
    assert (s.error is not None) is error


@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=True),
        st.integers(),
        st.text(),
        st.tuples(st.floats(), st.text()),
    )
)
def test_normalize_result_never_raises_and_stays_in_range(raw: object) -> None:
    s = normalize_result(raw)
    assert s.value is None or 0.0 <= s.value <= 1.0


def test_scorer_decorator_sets_name_and_threshold() -> None:
    @scorer("polite", threshold=0.5)
    def f(case: Case, trial: Trial) -> float:
        return 0.6

    assert scorer_name(f) == "polite"
    assert scorer_threshold(f) == 0.5
    assert Scorers([f]).apply(Case(id="a", input="q"), Trial(case_id="a"))["polite"].passed


def test_a_scorer_that_raises_is_a_scorer_error_and_others_still_run() -> None:
    def boom(case: Case, trial: Trial) -> float:
        raise ZeroDivisionError("division by zero")

    def ok(case: Case, trial: Trial) -> bool:
        return True

    scores = Scorers([boom, ok]).apply(Case(id="a", input="q"), Trial(case_id="a"))
    assert scores["boom"].value is None
    assert scores["boom"].error is not None and "ZeroDivisionError" in scores["boom"].error
    assert scores["ok"].value == 1.0


def test_duplicate_scorer_names_are_refused() -> None:
    from agenteval.errors import InputError

    def a(case: Case, trial: Trial) -> bool:
        return True

    with pytest.raises(InputError, match="named 'a'"):
        Scorers([a, a])


# --- status: explicit data, never read from the reason -------------------------------------


def test_status_is_derived_from_value_threshold_and_error() -> None:
    assert Score(1.0, "ok").status == "passed"
    assert Score(0.4, "low", 0.5).status == "failed"
    assert Score(0.5, "edge", 0.5).status == "passed"
    assert Score(None, "no canary").status == "not_applicable"
    assert Score(None, "boom", error="boom").status == "error"


def test_a_reason_never_decides_the_status() -> None:
    assert Score(None, "inconclusive: looks like a judge error").status == "not_applicable"
    assert Score(1.0, "inconclusive wording, but a value").status == "passed"
    assert inconclusive("tie between C and I").status == "inconclusive"
    assert not_applicable("inconclusive: legacy wording").status == "not_applicable"


def test_explicit_status_must_agree_with_the_value() -> None:
    assert Score(None, "could not decide", status="inconclusive").passed is None
    assert Score(None, "x", status="error").error == "x"  # the reason becomes the error
    with pytest.raises(ValueError, match="contradicts"):
        Score(0.2, "x", 0.5, status="passed")
    with pytest.raises(ValueError, match="contradicts"):
        Score(1.0, "x", status="failed")
    with pytest.raises(ValueError, match="needs a value"):
        Score(None, "x", status="passed")
    with pytest.raises(ValueError, match="value None"):
        Score(0.5, "x", status="inconclusive")
    with pytest.raises(ValueError, match="unknown score status"):
        Score(None, "x", status="maybe")  # type: ignore[arg-type]


def test_a_custom_scorer_can_return_inconclusive_and_it_is_counted_so() -> None:
    from agenteval.llm.pricing import PriceTable
    from agenteval.rundir import RunHeader
    from agenteval.summary.accumulator import Accumulator

    @scorer("vibes")
    def vibes(case: Case, trial: Trial) -> Score:
        if case.id == "a":
            return inconclusive("the oracle was down")
        if case.id == "b":
            return Score(None, "Inconclusive is only a word here")  # not applicable
        return Score(1.0, "inconclusive-sounding reason, but a pass")

    scorers = Scorers([vibes])
    acc = Accumulator(RunHeader(), None, PriceTable.default())
    for cid in "abc":
        t = Trial(case_id=cid, output="x")
        acc.add(t, scorers.apply(Case(id=cid, input="q"), t))
    s = acc.finish().scorers["vibes"]
    assert (s.inconclusive, s.not_applicable, s.applicable, s.passed) == (1, 1, 1, 1)


_statuses = st.sampled_from(STATUSES)
_reasons = st.one_of(st.text(max_size=30), st.sampled_from(["inconclusive: x", "Inconclusive"]))


@st.composite
def _scores(draw: st.DrawFn) -> Score:
    status = draw(_statuses)
    threshold = draw(st.sampled_from([0.0, 0.5, 1.0]))
    reason = draw(_reasons)
    if status in ("passed", "failed"):
        lo, hi = (threshold, 1.0) if status == "passed" else (0.0, threshold)
        if status == "failed" and threshold == 0.0:
            status, lo, hi = "passed", 0.0, 1.0
        value = draw(st.floats(lo, hi, exclude_max=status == "failed"))
        return Score(value, reason, threshold, status=status)
    error = draw(st.one_of(st.none(), st.text(max_size=10))) if status == "error" else None
    return Score(None, reason, threshold, error, status=status)


@given(_scores())
def test_round_trip_preserves_status(s: Score) -> None:
    back = Score.from_dict(json.loads(json.dumps(s.to_dict())))
    assert back == s and back.status == s.status


@given(
    st.one_of(st.none(), st.floats(0.0, 1.0)),
    _reasons,
    st.one_of(st.none(), st.text(max_size=10)),
    st.sampled_from([0.5, 1.0]),
)
def test_legacy_scores_migrate_as_0_1_meant_and_migration_is_idempotent(
    value: float | None, reason: str, error: str | None, threshold: float
) -> None:
    old = {"value": value, "reason": reason, "passed": None, "threshold": threshold}
    if error is not None:
        old["error"] = error
    s = Score.from_dict(old)
    if error is not None:
        expected = "error"
    elif value is None:
        expected = "inconclusive" if reason.lower().startswith("inconclusive") else "not_applicable"
    else:
        expected = "passed" if value >= threshold else "failed"
    assert s.status == expected
    assert Score.from_dict(s.to_dict()) == s  # migrating migrated data changes nothing


def test_scorer_objects_carry_kind_safety_settings_and_an_import_ref() -> None:
    spec = _polite_safety.spec
    assert (spec.name, spec.kind, spec.threshold, spec.safety) == ("polite", "graded", 0.5, True)
    assert spec.ref == f"{__name__}:_polite_safety"
    assert _polite_safety(Case(id="a", input="q"), Trial(case_id="a", output="please")) == 1.0

    @scorer("local")
    def local(case: Case, trial: Trial) -> bool:
        return True

    assert local.spec.ref is None  # defined inside a function: no import path
    assert local.spec.kind == "pass/fail" and not local.spec.safety


@scorer("polite", threshold=0.5, safety=True)
def _polite_safety(case: Case, trial: Trial) -> float:
    return 1.0 if trial.output and "please" in trial.output else 0.0


def test_bare_decorator_and_plain_functions_get_the_documented_defaults() -> None:
    @scorer
    def tidy(case: Case, trial: Trial) -> bool:
        return True

    def plain(case: Case, trial: Trial) -> object:
        return "not a score"

    def boom(case: Case, trial: Trial) -> float:
        raise RuntimeError("x")

    specs = {s.name: s for s in Scorers([tidy, plain, boom]).specs}
    for name in ("tidy", "plain"):
        s = specs[name]
        assert (s.kind, s.threshold, s.safety, s.ref) == ("pass/fail", 1.0, False, None)
    scores = Scorers([plain, boom]).apply(Case(id="a", input="q"), Trial(case_id="a"))
    assert scores["plain"].status == scores["boom"].status == "error"
    assert Scorers([scorer(threshold=0.5)(tidy)]).specs[0].kind == "graded"
