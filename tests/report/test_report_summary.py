"""Summary numbers over real run directories."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _runbuild import bad, graded, ok, sample_cases, sample_trials

from agenteval.cases.case import Case
from agenteval.report import summarize, summarize_records
from agenteval.rundir import RunHeader, TrialRecord
from agenteval.scoring.score import Score
from agenteval.trials.trial import Latency, Trial, Usage

SCORERS = ["exact_match", "retrieval_recall", "judge_correctness"]


@pytest.fixture
def sample(make_run: Callable[..., Path]) -> Path:
    return make_run(sample_cases(), sample_trials(), scorers=SCORERS)


def test_counts_and_scorer_statistics(sample: Path) -> None:
    s = summarize(sample)
    assert (s.trials, s.answered, s.failed, s.cases) == (4, 3, 1, 4)
    em = s.scorers["exact_match"]
    assert (em.applicable, em.passed, em.not_applicable, em.errors) == (4, 1, 0, 0)
    assert em.mean == pytest.approx(0.25) and em.pass_rate == pytest.approx(0.25)
    assert em.pass_rate_ci is not None and em.pass_rate_ci.method == "wilson"
    assert em.pass_rate_ci.low <= 0.25 <= em.pass_rate_ci.high
    assert em.mean_ci is not None and em.mean_ci.method == "t"
    rr = s.scorers["retrieval_recall"]
    assert (rr.applicable, rr.not_applicable) == (2, 2)
    jc = s.scorers["judge_correctness"]
    assert (jc.applicable, jc.inconclusive, jc.errors, jc.not_applicable) == (1, 1, 1, 0)
    assert jc.judge is True
    assert s.scorer_errors == {"exact_match": 0, "retrieval_recall": 0, "judge_correctness": 1}
    assert s.inconclusive["judge_correctness"] == 1


def test_latency_percentiles(sample: Path) -> None:
    s = summarize(sample)
    total = s.latency.total
    # values 1, 2, 3, 30: linear interpolation
    assert total.n == 4 and total.p50 == pytest.approx(2.5)
    assert total.p95 == pytest.approx(3 + 0.85 * 27)
    assert s.latency.active.p50 == pytest.approx(1.5)
    assert sum(b.count for b in total.histogram) == 4


def test_cost_agent_and_judge_separately(sample: Path) -> None:
    c = summarize(sample).cost
    # gpt-4o: 2.50 in / 10.00 out per million; 4000 in, 400 out
    assert c.agent_usd == pytest.approx((4000 * 2.5 + 400 * 10) / 1e6)
    # gpt-4o-mini judge: 0.15 / 0.60; two judged scores of 1000 in / 100 out
    assert c.judge_usd == pytest.approx((2000 * 0.15 + 200 * 0.6) / 1e6)
    assert c.total_usd == pytest.approx(c.agent_usd + c.judge_usd)
    assert c.per_trial_usd == pytest.approx(c.total_usd / 4)
    assert c.correct_by == "exact_match" and c.correct == 1
    assert c.per_correct_usd == pytest.approx(c.total_usd)
    assert c.agent_tokens.input == 4000 and c.judge_tokens.output == 200


def test_unknown_model_makes_cost_unknown_not_zero(make_run: Callable[..., Path]) -> None:
    run = make_run(
        [Case(id="a", input="q")],
        [(Trial(case_id="a", output="x", usage=[Usage(model="mystery-1", input_tokens=5)]), {})],
    )
    c = summarize(run).cost
    assert c.agent_usd is None and c.total_usd is None and c.per_trial_usd is None
    assert c.agent_unpriced_trials == 1 and c.unknown_models == ["mystery-1"]


def test_run_price_table_is_used(make_run: Callable[..., Path]) -> None:
    run = make_run(
        [Case(id="a", input="q")],
        [(Trial(case_id="a", output="x", usage=[Usage(model="mine", input_tokens=10**6)]), {})],
        prices={"mine": {"input": 3.0, "output": 0.0}},
    )
    assert summarize(run).cost.agent_usd == pytest.approx(3.0)


def test_retries_failures_attribution_tags(sample: Path) -> None:
    s = summarize(sample)
    assert s.retries.total == 2 and s.retries.trials_with_retries == 1
    assert s.retries.by_reason["rate_limit"].wait_s == pytest.approx(1.5)
    assert s.failures.by_cause["timeout"].count == 1
    assert s.failures.by_cause["timeout"].examples == ["c4"]
    a = s.attribution
    assert a is not None
    # c2: wrong, recall n/a -> unknown; c3: wrong, recall 0 -> retrieval; c4 never answered
    assert (a.wrong, a.retrieval, a.model, a.unknown) == (2, 1, 0, 1)
    assert s.tags["math"].trials == 2 and s.tags["math"].failed == 1
    assert s.tags["math"].scorers["exact_match"].pass_rate == pytest.approx(0.5)
    assert s.tags["geo"].scorers["exact_match"].pass_rate == 0.0
    assert s.repeats is None


def test_model_attribution(make_run: Callable[..., Path]) -> None:
    run = make_run(
        [Case(id="a", input="q", expected="1", relevant_docs=["d"])],
        [(Trial(case_id="a", output="2"), {"exact_match": bad(), "retrieval_recall": ok()})],
    )
    a = summarize(run).attribution
    assert a is not None and (a.model, a.retrieval) == (1, 0)


def test_repeats_pass_at_1_pass_hat_k_and_flaky(make_run: Callable[..., Path]) -> None:
    cases = [Case(id="stable", input="q"), Case(id="flaky", input="q"), Case(id="never", input="q")]
    outcomes = {"stable": [1, 1, 1], "flaky": [1, 0, 1], "never": [0, 0, 0]}
    trials = [
        (Trial(case_id=cid, repeat=r, output="x"), {"exact_match": ok() if v else bad()})
        for cid, vs in outcomes.items()
        for r, v in enumerate(vs)
    ]
    rep = summarize(make_run(cases, trials)).repeats
    assert rep is not None and rep.k == 3
    em = rep.scorers["exact_match"]
    assert em.pass_at_1 == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert em.pass_hat_k == pytest.approx(1 / 3)  # only 'stable' passes all three
    assert em.pass_at_k == pytest.approx(2 / 3)
    assert rep.flaky_count == 1 and rep.flaky[0].case_id == "flaky"


def test_graded_scorer_is_not_binary(make_run: Callable[..., Path]) -> None:
    run = make_run(
        [Case(id="a", input="q"), Case(id="b", input="q")],
        [
            (Trial(case_id="a", output="x"), {"step_efficiency": graded(0.4)}),
            (Trial(case_id="b", output="x"), {"step_efficiency": graded(0.8)}),
        ],
    )
    ss = summarize(run).scorers["step_efficiency"]
    assert ss.binary is False and ss.mean == pytest.approx(0.6) and ss.pass_rate == 0.5


def test_summary_is_json_for_run_json(sample: Path) -> None:
    data = summarize(sample).model_dump(mode="json")
    assert json.loads(json.dumps(data))["scorers"]["exact_match"]["applicable"] == 4


def test_streaming_memory_stays_flat() -> None:
    """4,000 trials with 50 kB outputs (200 MB of text) summarise in a few MB."""
    big = "x" * 50_000

    def records() -> Iterator[TrialRecord]:
        for i in range(4_000):
            rec = TrialRecord(
                case_id=f"c{i % 400}",
                repeat=i // 400,
                output=big,
                latency=Latency(total_s=i % 97 / 10, active_s=0.1),
            )
            rec.scores = {"exact_match": Score(float(i % 2), "r"), "other": Score(None, "n/a")}
            yield rec

    tracemalloc.start()
    s = summarize_records(RunHeader(), records(), None)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert s.trials == 4_000 and s.repeats is not None and s.repeats.k == 10
    assert peak < 20_000_000, f"peak {peak / 1e6:.1f} MB"
