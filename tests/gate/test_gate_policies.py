"""Gate policies (``--require``, ``--no-new-failures``, ``must_not_regress``), the rule for
a case that newly fails with repeats, and what the outputs lead with."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_gate import write_run

from agenteval.errors import InputError
from agenteval.gate.paired import compare_runs
from agenteval.report.markdown import render_gate_markdown


@pytest.fixture
def runs(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(100))

    def make(outcomes: Any, **kw: Any) -> Path:
        return write_run(tmp_path / f"run{next(counter)}", outcomes, **kw)

    return make


def test_require_is_a_floor_on_the_candidates_pass_rate(runs: Callable[..., Path]) -> None:
    base = runs([{"exact_match": 1.0}] * 20)
    cand = runs([{"exact_match": 0.0 if i < 3 else 1.0} for i in range(20)])  # 85%
    r = compare_runs(base, cand, require={"exact_match": 0.9})
    (p,) = r.policies
    assert (p.kind, p.observed, p.blocks) == ("require", 0.85, True)
    assert r.verdict == "BLOCKED" and any("--require exact_match>=0.9" in x for x in r.reasons)
    r = compare_runs(base, cand, require={"exact_match": 0.8})
    assert not r.policies[0].blocks and r.verdict == "INCONCLUSIVE"  # 3 got worse
    with pytest.raises(InputError, match="neither run has: nope"):
        compare_runs(base, cand, require={"nope": 0.5})


def test_no_new_failures_named_or_all_and_combined(runs: Callable[..., Path]) -> None:
    base = runs([{"a": 1.0, "b": 1.0}] * 200)
    cand = runs([{"a": 0.0 if i == 7 else 1.0, "b": 1.0} for i in range(200)])
    # one case on 200 is no significant drop: INCONCLUSIVE, not BLOCKED, without the policy
    assert compare_runs(base, cand).verdict == "INCONCLUSIVE"
    for named in ([], ["a"]):
        r = compare_runs(base, cand, no_new_failures=named)
        assert r.verdict == "BLOCKED" and r.exit_code == 1
        assert [p.cases for p in r.policies if p.scorer == "a"] == [["c007"]]
    r = compare_runs(base, cand, no_new_failures=["b"])
    assert r.verdict == "INCONCLUSIVE" and not r.policies[0].blocks
    r = compare_runs(base, cand, no_new_failures=["b"], require={"a": 0.99})
    assert [p.blocks for p in r.policies] == [False, False]  # 199/200 >= 0.99
    r = compare_runs(base, cand, no_new_failures=["b"], require={"a": 0.999})
    assert r.verdict == "BLOCKED" and [p.kind for p in r.policies if p.blocks] == ["require"]


def test_with_repeats_a_case_newly_fails_when_most_repeats_fail(runs: Callable[..., Path]) -> None:
    ok = [{"a": 1.0}] * 3
    base = runs([ok] * 4)
    cand = runs(
        [
            ok,
            [{"a": 1.0}, {"a": 0.0}, {"a": 1.0}],  # one flaky failure of 3: not newly failing
            [{"a": 0.0}, {"a": 0.0}, {"a": 1.0}],  # two of 3: newly failing
            [{"a": 0.0}] * 3,
        ]
    )
    r = compare_runs(base, cand, no_new_failures=[])
    assert r.policies[0].cases == ["c002", "c003"]


def test_an_unanswered_case_newly_fails(runs: Callable[..., Path]) -> None:
    base = runs([{"a": 1.0}] * 5)
    cand = runs([{"a": 1.0}] * 4 + [{"a": None}], failed=[4])
    assert compare_runs(base, cand, no_new_failures=["a"]).policies[0].cases == ["c004"]


def test_must_not_regress_in_run_json_applies_without_a_flag(runs: Callable[..., Path]) -> None:
    specs = [{"name": "a", "must_not_regress": True}, {"name": "b"}]
    base = runs([{"a": 1.0, "b": 1.0}] * 50, scorers=specs)
    cand = runs([{"a": 0.0 if i == 3 else 1.0, "b": 1.0} for i in range(50)], scorers=specs)
    r = compare_runs(base, cand)
    assert r.verdict == "BLOCKED" and r.policies[0].scorer == "a"
    assert r.policies[0].cases == ["c003"]


def test_must_not_regress_is_recorded_by_the_decorator() -> None:
    from agenteval import scorer

    @scorer("x", must_not_regress=True)
    def x(case: Any, trial: Any) -> float:
        return 1.0

    assert x.spec.model_dump()["must_not_regress"] is True
    assert "must_not_regress" not in scorer("y")(lambda c, t: 1.0).spec.model_dump()


def test_outputs_lead_with_what_got_worse(
    runs: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    base = runs([{"exact_match": 1.0}] * 8)
    cand = runs([{"exact_match": 0.0 if i < 3 else 1.0} for i in range(8)])
    r = compare_runs(base, cand)
    text = render_gate_markdown(r)
    assert text.index("**Got worse:**") < text.index("**Why:**") < text.index("| scorer |")
    assert "3 newly failing: c000, c001, c002" in text
    assert "cases would settle it" in text and r.verdict in text
    out = tmp_path / "v.json"
    proc = cli("gate", base, cand, "--json", out)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert list(data)[:2] == ["verdict", "got_worse"]
    assert data["got_worse"] == {"exact_match": ["c000", "c001", "c002"]}
    assert proc.stdout.index("got worse:") < proc.stdout.index("Scorers (paired cases)")
    assert proc.stdout.index("Scorers") < proc.stdout.index("verdict: INCONCLUSIVE")
