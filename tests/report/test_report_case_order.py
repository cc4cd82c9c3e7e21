"""Case ids a report lists (failure examples, flaky cases) come in dataset order, whatever
order the trials finished in: two runs of the same cases give the same report."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from _runbuild import bad, ok

from agenteval.cases.case import Case
from agenteval.report import summarize
from agenteval.rundir import iter_trials, read_header
from agenteval.summary.compute import summarize_records
from agenteval.trials.trial import Failure, Trial


def _trials(order: list[int]) -> list[tuple[Trial, dict]]:
    out = []
    for i in order:
        for r in range(2):
            cid = f"case-{i:02d}"
            if i % 2:  # odd cases fail, with a message naming the case
                t = Trial(case_id=cid, repeat=r, failure=Failure(cause="timeout", message=cid))
                out.append((t, {}))
            else:  # even cases are flaky on exact_match
                t = Trial(case_id=cid, repeat=r, output="x")
                out.append((t, {"exact_match": ok() if r == 0 else bad()}))
    return out


def test_examples_and_flaky_cases_in_dataset_order(make_run: Callable[..., Path]) -> None:
    cases = [Case(id=f"case-{i:02d}", input="q", expected="x") for i in range(20)]
    expected_failing = [f"case-{i:02d}" for i in (1, 3, 5, 7, 9)]
    expected_flaky = [f"case-{i:02d}" for i in range(0, 20, 2)]
    seen = []
    for seed in range(4):
        order = list(range(20))
        random.Random(seed).shuffle(order)
        run = make_run(cases, _trials(order), scorers=["exact_match"])
        for s in (
            summarize(run),
            summarize_records(read_header(run), iter_trials(run), {c.id: c for c in cases}),
        ):
            cause = s.failures.by_cause["timeout"]
            assert cause.examples == expected_failing
            assert cause.message == "case-01"
            assert s.repeats is not None
            assert [f.case_id for f in s.repeats.flaky][:10] == expected_flaky
            seen.append(s.model_dump(mode="json", exclude={"run_id"}))
    assert all(x == seen[0] for x in seen[1:]), "the same cases gave different reports"
