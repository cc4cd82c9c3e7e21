"""``answer_match``: a built-in (``--scorer answer_match``, ``builtin_scorer``) with modes
normalised, contains, regex and numeric, and its not-applicable rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agenteval.benchmarks.scorers import answer_match as bench_answer_match
from agenteval.cases.case import Case
from agenteval.scorers import answer_match, builtin_scorer
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.trials.trial import Failure, Trial


def _score(expected: str | None, output: str | None, mode: str | None = None) -> Score:
    meta = {} if mode is None else {"match": mode}
    case = Case(id="c", input="q", expected=expected, metadata=meta)
    failure = None if output is not None else Failure(cause="timeout", message="t")
    return Scorers([answer_match]).apply(case, Trial(case_id="c", output=output, failure=failure))[
        "answer_match"
    ]


def test_modes() -> None:
    assert _score("19753", "It is 19,753.", "numeric").passed
    assert not _score("19753", "It is 19,754.", "numeric").passed
    assert _score("19753", "Revenue was 19753.004 in 2023", "numeric").passed
    assert _score("paris", "The capital is Paris, of course", "contains").passed
    assert not _score("lyon", "The capital is Paris", "contains").passed
    assert _score(r"\b\d{3}-\d{4}\b", "call 555-1234 now", "regex").passed
    assert not _score(r"^\d+$", "call 555-1234 now", "regex").passed
    assert _score("Brasília", "brasilia.").passed  # normalised (the default)
    assert not _score("Brasília", "It is Brasília").passed


def test_not_applicable_and_errors() -> None:
    assert _score(None, "x").status == "not_applicable"
    assert _score("1", None, "numeric").status == "not_applicable"
    assert _score("x", "y", "fuzzy").status == "error"
    assert _score("not a number", "5", "numeric").status == "error"
    assert _score("(", "(", "regex").status == "error"


@given(
    st.integers(-(10**9), 10**9),
    st.text(max_size=20).filter(lambda t: not any(c.isdigit() for c in t)),
)
def test_a_number_stated_anywhere_matches_by_value(n: int, words: str) -> None:
    assert _score(str(n), f"{words} {n:,} {words}", "numeric").passed


def test_builtin_by_name_with_a_mode_setting_and_the_benchmarks_copy_agrees() -> None:
    s = builtin_scorer("answer_match", {"mode": "contains"})
    assert s.spec.ref == "builtin:answer_match" and s.spec.settings == {"mode": "contains"}
    case = Case(id="c", input="q", expected="paris")
    trial = Trial(case_id="c", output="It is Paris")
    assert Scorers([s]).apply(case, trial)["answer_match"].passed
    numeric = Case(id="c", input="q", expected="5", metadata={"match": "numeric"})
    five = Trial(case_id="c", output="five is 5")
    assert bench_answer_match(numeric, five).passed == answer_match(numeric, five).passed


def test_scorer_flag_runs_it_and_rescore_rebuilds_it(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "a", "input": "q", "expected": "19753", "metadata": {"match": "numeric"}})
        + "\n",
        encoding="utf-8",
    )
    trials = tmp_path / "trials.jsonl"
    trials.write_text(json.dumps({"case_id": "a", "output": "It is 19,753."}) + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "agenteval", "score", str(cases), str(trials), "--out",
         str(tmp_path / "run"), "--scorer", "answer_match", "--quiet"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    (line,) = (tmp_path / "run" / "trials.jsonl").read_text().splitlines()
    assert json.loads(line)["scores"]["answer_match"]["status"] == "passed"
    assert json.loads(line)["scores"]["exact_match"]["status"] == "failed"
    head = json.loads((tmp_path / "run" / "run.json").read_text())
    assert {"name": "answer_match", "ref": "builtin:answer_match"}.items() <= next(
        s for s in head["scorers"] if s["name"] == "answer_match"
    ).items()
