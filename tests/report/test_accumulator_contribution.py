"""Contributions (what a worker says each trial adds to a summary) folded in order give the
summary of :meth:`Accumulator.add` to the last bit: ``rescore --processes N`` relies on it.

Both go through the one :meth:`Accumulator.fold`; what these tests hold is the rest: a
contribution computed in another process (pickled across, with its own PriceTable) and
folded without the trial gives what ``add`` gives with the trial in hand, correctness
scorer chosen from the header included."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenteval.llm.pricing import PriceTable
from agenteval.rundir import DatasetRef, RunHeader
from agenteval.scoring.score import Score
from agenteval.summary.accumulator import Accumulator
from agenteval.summary.contribution import contribution
from agenteval.summary.model import Summary
from agenteval.trials.trial import CachedCall, Failure, Latency, Retry, Trial, Usage

CASES = [f"c{i}" for i in range(6)]
TAGS = {"c0": ("a",), "c1": ("a", "b"), "c2": ("b", "b"), "c4": ("a",)}
PRICES = PriceTable.from_dict({"known": {"input": 1.3, "output": 7.1}})
SCORERS = ["exact_match", "graded", "judge_correctness", "retrieval_recall", "maybe"]

_usage = st.builds(
    Usage,
    model=st.sampled_from(["known", "unknown", None]),
    input_tokens=st.integers(0, 5000),
    output_tokens=st.integers(0, 900),
)
_unit = st.floats(0.0, 1.0, allow_nan=False)
_cached = st.builds(
    CachedCall,
    model=st.sampled_from(["known", "unknown", None]),
    input_tokens=st.integers(0, 5000),
    output_tokens=st.integers(0, 900),
)


@st.composite
def _score(draw: Any) -> Score:
    kind = draw(st.sampled_from(["binary", "graded", "na", "error", "inconclusive"]))
    usage = draw(st.lists(_usage, max_size=2))
    if kind == "binary":
        return Score(draw(st.sampled_from([0.0, 1.0])), "r", usage=usage)
    if kind == "graded":
        return Score(draw(_unit), "r", threshold=0.5, usage=usage)
    if kind == "error":
        return Score(None, "boom", error="boom", usage=usage)
    return Score(None, "r", status="inconclusive" if kind == "inconclusive" else None)


@st.composite
def _trial(draw: Any) -> tuple[Trial, dict[str, Score]]:
    failed = draw(st.booleans())
    user = draw(st.one_of(st.none(), st.lists(_usage, max_size=2)))
    trial = Trial(
        case_id=draw(st.sampled_from([*CASES, "not-in-dataset"])),
        repeat=draw(st.integers(0, 2)),
        output=None if failed else draw(st.sampled_from(["yes", ""])),
        usage=draw(st.lists(_usage, max_size=3)),
        cached=draw(st.lists(_cached, max_size=2)),  # calls the replay cache answered
        latency=Latency(
            total_s=draw(st.one_of(st.none(), st.floats(0, 30, allow_subnormal=False))),
            active_s=draw(st.one_of(st.none(), st.floats(0, 30, allow_subnormal=False))),
        ),
        retries=draw(
            st.lists(
                st.builds(
                    Retry, reason=st.sampled_from(["rate_limit", "timeout"]), wait_s=st.floats(0, 5)
                ),
                max_size=2,
            )
        ),
        failure=Failure(
            cause=draw(st.sampled_from(["timeout", "agent_error"])),
            message=draw(st.text(max_size=8)),
        )
        if failed
        else None,
        metadata={}
        if user is None
        else {"conversation": {"user": {"usage": [u.model_dump() for u in user]}}},
    )
    names = draw(st.lists(st.sampled_from(SCORERS), unique=True))
    return trial, {n: draw(_score()) for n in names}


_HEADERS: dict[str, RunHeader] = {}


def _header(scorers: list[str]) -> RunHeader:
    """One header per scorer list (a header has its own run_id)."""
    key = ",".join(scorers)
    if key not in _HEADERS:
        _HEADERS[key] = RunHeader(
            dataset=DatasetRef(path="d", sha256="s", cases=6), scorers=scorers
        )
    return _HEADERS[key]


def _both(trials: list[tuple[Trial, dict[str, Score]]], scorers: list[str]) -> tuple[Any, Any]:
    def acc() -> Accumulator:
        return Accumulator(
            _header(scorers), TAGS, PRICES, per_case=False, case_order=lambda: list(CASES)
        )

    one, folded = acc(), acc()
    assert folded.correct_by is not None
    for trial, scores in trials:
        one.add(trial, scores)
        part = contribution(trial, scores, PRICES, folded.correct_by)
        folded.add_contribution(pickle.loads(pickle.dumps(part)))  # as a worker sends it
    return _dump(one.finish()), _dump(folded.finish())


def _dump(s: Summary) -> str:
    return s.model_dump_json()  # floats as their shortest repr: equal text = equal bits


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_trial(), max_size=25), st.sampled_from([["exact_match"], ["judge_correctness"]]))
def test_contributions_folded_in_order_equal_add(
    trials: list[tuple[Trial, dict[str, Score]]], scorers: list[str]
) -> None:
    one, folded = _both(trials, scorers)
    assert one == folded


@settings(max_examples=50, deadline=None)
@given(st.lists(_trial(), max_size=25), st.integers(0, 25))
def test_any_split_into_batches_folds_to_the_same_summary(
    trials: list[tuple[Trial, dict[str, Score]]], cut: int
) -> None:
    """Workers compute contributions batch by batch, each batch in its own process (with
    its own PriceTable cache); the driver folds them in order: the split does not matter."""
    prices2 = PriceTable.from_dict({"known": {"input": 1.3, "output": 7.1}})
    parts = [
        contribution(t, s, PRICES if i < cut else prices2, "exact_match")
        for i, (t, s) in enumerate(trials)
    ]
    one, _ = _both(trials, ["exact_match"])
    acc = Accumulator(
        _header(["exact_match"]), TAGS, PRICES, per_case=False, case_order=lambda: list(CASES)
    )
    for p in parts:
        acc.add_contribution(p)
    assert _dump(acc.finish()) == one
