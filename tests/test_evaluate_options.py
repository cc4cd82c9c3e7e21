"""evaluate()/aevaluate() share one set of options, and a run's summary comes typed too."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.evaluation import EvaluateKwargs, EvaluateOptions, aevaluate, evaluate
from agenteval.summary.model import Summary

CASES = [
    {"id": "cap", "input": "Capital of France?", "expected": "paris"},
    {"id": "odd", "input": "?", "expected": "x"},
]


def answer(case: Case) -> str:
    return "Paris." if case.id == "cap" else "no idea"


def test_the_keyword_types_and_the_options_name_the_same_fields_with_the_same_types() -> None:
    kwargs = {  # as written (the module defers its annotations)
        k: getattr(v, "__forward_arg__", v) for k, v in EvaluateKwargs.__annotations__.items()
    }
    fields = {f.name: f.type for f in dataclasses.fields(EvaluateOptions)}
    assert len(fields) == 17  # 16, and cache (docs/cache.md)
    assert kwargs == fields


def test_an_unknown_keyword_is_a_type_error_naming_the_function() -> None:
    unknown = r"evaluate\(\) got an unexpected keyword argument 'concurency'"
    with pytest.raises(TypeError, match=unknown):
        evaluate(CASES, answer, concurency=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"aevaluate\(\) got an unexpected keyword argument 'x'"):
        asyncio.run(aevaluate(CASES, answer, x=1))  # type: ignore[call-arg]


def test_max_failure_rate_outside_zero_one_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"field 'max_failure_rate': must be within \[0, 1\]"):
        evaluate(CASES, answer, out=tmp_path / "r", max_failure_rate=1.5)
    assert not (tmp_path / "r").exists()


def test_the_typed_summary_holds_the_numbers_of_the_stored_one(tmp_path: Path) -> None:
    run = evaluate(CASES, answer, out=tmp_path / "r", repeats=2)
    typed = run.summary_model
    assert isinstance(typed, Summary)
    assert typed.trials == run.summary["trials"] == 4
    assert typed.scorers["exact_match"].mean == run.summary["scorers"]["exact_match"]["mean"] == 0.5
    assert typed.model_dump(mode="json") == run.summary


def test_evaluate_and_aevaluate_write_the_same_run_from_the_same_options(tmp_path: Path) -> None:
    options = {"repeats": 2, "concurrency": 1, "builtin_scorers": True}
    a = evaluate(CASES, answer, out=tmp_path / "a", **options)  # type: ignore[arg-type]
    b = asyncio.run(aevaluate(CASES, answer, out=tmp_path / "b", **options))  # type: ignore[arg-type]
    assert a.header.settings == b.header.settings
    assert [t.scores for t in a.trials()] == [t.scores for t in b.trials()]
