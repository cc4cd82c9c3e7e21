from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import agenteval
from agenteval import Case, InputError, Trial, evaluate, scorer


def answer(case: Case) -> str:
    return {"cap": "Paris.", "sum": "19,753"}.get(case.id, "no idea")


@scorer("short", threshold=0.5)
def short(case: Case, trial: Trial) -> tuple[float, str] | None:
    if trial.output is None:
        return None
    return (1.0 if len(trial.output) < 10 else 0.0), f"{len(trial.output)} chars"


def crashy(case: Case, trial: Trial) -> float:
    raise ValueError("bad scorer")


CASES = [
    {"id": "cap", "input": "Capital of France?", "expected": "paris"},
    {"id": "sum", "input": "19000+753?", "expected": 19753.0},
    {"id": "odd", "input": "?", "expected": "x", "tags": ["hard"]},
]


def test_evaluate_runs_scores_and_writes_a_run(tmp_path: Path) -> None:
    run = evaluate(CASES, answer, scorers=[short, crashy], out=tmp_path / "run", repeats=2)
    trials = list(run.trials())
    assert len(trials) == 6
    assert run.scores("exact_match").count(1.0) == 4
    assert all(t.scores["crashy"].error for t in trials)
    assert run.summary["trials"] == 6
    assert (tmp_path / "run" / "run.json").exists()
    assert run.header.agent == {"kind": "python", "target": f"{__name__}:answer"}


def test_evaluate_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    async def notebook_cell() -> agenteval.Run:
        return evaluate(CASES, answer, out=tmp_path / "nb")

    run = asyncio.run(notebook_cell())
    assert run.summary["trials"] == 3


def test_aevaluate_with_async_agent(tmp_path: Path) -> None:
    async def agent(case: Case) -> str:
        await asyncio.sleep(0)
        return "Paris"

    run = asyncio.run(agenteval.aevaluate(CASES[:1], agent, out=tmp_path / "a"))
    assert run.scores("exact_match") == [1.0]


def test_bad_dataset_fails_before_the_agent_is_called(tmp_path: Path) -> None:
    called = []

    def agent(case: Case) -> str:
        called.append(case.id)
        return ""

    with pytest.raises(InputError, match="duplicate"):
        evaluate(
            [{"id": "a", "input": "x"}, {"id": "a", "input": "y"}], agent, out=tmp_path / "bad"
        )
    assert called == []
    assert not (tmp_path / "bad").exists()


def test_live_summary_equals_the_summary_read_back_from_the_files(tmp_path: Path) -> None:
    from agenteval.report import summarize

    def agent(case: Case, repeat: int) -> dict[str, object]:
        if case.id == "odd" and repeat == 1:
            raise RuntimeError("flaky crash")
        return {
            "output": answer(case),
            "usage": {"model": "gpt-4o-mini", "input_tokens": 7, "output_tokens": 3},
        }

    run = evaluate(CASES, agent, scorers=[short], out=tmp_path / "live", repeats=3)
    stored = run.summary
    again = summarize(tmp_path / "live").model_dump(mode="json")
    assert stored == again
    assert stored["failed"] == 1 and stored["repeats"] is not None
    assert stored["tags"]["hard"]["trials"] == 3


def test_a_list_dataset_leaves_no_temporary_file(tmp_path: Path) -> None:
    import tempfile

    def leftovers() -> set[str]:
        return {p.name for p in Path(tempfile.gettempdir()).glob("agenteval-cases-*")}

    before = leftovers()
    evaluate(CASES, answer, out=tmp_path / "r")
    assert leftovers() == before
    assert (tmp_path / "r" / "cases.jsonl").read_text().count("\n") == 3


@scorer("careful", threshold=0.5, kind="graded", safety=True)
def careful_scorer(case: Case, trial: Trial) -> float:
    return 0.75


def test_run_json_records_every_scorer_with_its_spec(tmp_path: Path) -> None:
    def nested(case: Case, trial: Trial) -> bool:
        return True

    cases = [Case(id="a", input="q", expected="x")]
    run = evaluate(cases, answer, scorers=[careful_scorer, nested], out=tmp_path / "r")
    specs = {s.name: s for s in run.header.scorers}
    assert run.header.format_version == 2
    assert specs["careful"].model_dump() == {
        "name": "careful",
        "kind": "graded",
        "threshold": 0.5,
        "safety": True,
        "ref": f"{__name__}:careful_scorer",
        "settings": {},
    }
    assert specs["nested"].ref is None and not specs["nested"].safety
    assert specs["exact_match"].ref == "builtin:exact_match"
    assert run.header.safety_scorers == [
        "procedure",
        "avoids_forbidden_text",
        "pii_leakage",
        "careful",
    ]
    (trial,) = run.trials()
    assert trial.scores["careful"].status == "passed"


@pytest.mark.parametrize(
    "imports",
    [
        "from agenteval import aevaluate, evaluate",
        "from agenteval import evaluate, aevaluate",
        "import agenteval.evaluation\nfrom agenteval import evaluate, aevaluate",
        "from agenteval import Run\nfrom agenteval import evaluate, aevaluate",
    ],
)
def test_the_public_names_are_the_functions_in_any_import_order(imports: str) -> None:
    """``from agenteval import evaluate`` is the function, whatever was imported first (the
    module was once named ``agenteval/evaluate.py``: importing it bound the package's
    ``evaluate`` attribute to the module, so the second name imported was the module)."""
    code = imports + "\nimport inspect\nassert inspect.isfunction(evaluate), evaluate\n"
    code += "assert inspect.iscoroutinefunction(aevaluate), aevaluate\n"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
