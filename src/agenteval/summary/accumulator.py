"""The accumulator behind every Summary: trials folded in one streaming pass.

Memory: latency values are kept as floats (percentiles need them), scorer statistics as
running moments, and per case only counters (for pass^k and flaky cases); trials are
never held.

Definitions:
- *correct answer*: the trial passed ``exact_match`` when that scorer is in the run, else
  the first scorer whose name contains ``correctness``; with neither, no correctness
  count and no cost per correct answer.
- a score counts by its ``status`` (never by its reason): ``passed``/``failed`` in the
  mean and pass rate, ``not_applicable``, ``inconclusive`` (judge errors, unparseable
  verdicts, ties) and ``error`` each in their own count.
- *agent cost*: the trial's ``usage`` priced; *judge cost*: every score's ``usage`` priced.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agenteval.llm.pricing import PriceTable
from agenteval.rundir import RunHeader, TrialRecord, iter_trials
from agenteval.scoring.score import Score
from agenteval.summary import stats
from agenteval.summary.cache import CacheTally
from agenteval.summary.contribution import Contribution, Priced, contribution
from agenteval.summary.distributions import distribution, repeat_summary
from agenteval.summary.examples import FailureExamples
from agenteval.summary.model import (
    Attribution,
    CauseCount,
    Interval,
    ReasonCount,
    ScorerSummary,
    Summary,
    TagScorer,
    TagSummary,
)
from agenteval.summary.percase import (
    CaseAggregate,
    aggregate_cases,
    case_scores,
    in_dataset_order,
)
from agenteval.trials.trial import Trial


def correctness_scorer(names: Iterable[str]) -> str | None:
    """The scorer that defines a correct answer (see the module docstring)."""
    names = list(names)
    if "exact_match" in names:
        return "exact_match"
    return next((n for n in names if "correctness" in n), None)


@dataclass(slots=True)
class _Moments:
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0
    passed: int = 0

    def add(self, x: float, passed: bool) -> None:
        self.n += 1
        d = x - self.mean
        self.mean += d / self.n
        self.m2 += d * (x - self.mean)
        self.passed += int(passed)


@dataclass(slots=True)
class _Counts:
    """One scorer's counters: plain attributes (a pydantic attribute write costs ~1 us)."""

    trials: int = 0
    errors: int = 0
    inconclusive: int = 0
    not_applicable: int = 0
    judge: bool = False
    binary: bool = True


class Accumulator:
    """Folds trials into a Summary. ``tags`` maps case id -> tags (absent: no tags).

    ``case_order`` gives the dataset's case ids in order, asked for only when the summary
    lists cases (failure examples, flaky cases), so those lists do not depend on the order
    trials finished in; without it, they are in finish order.

    With ``per_case=False`` no per-case aggregates are kept (memory flat in the number of
    cases); :func:`summarize` then adds them in a second pass only if the run has repeats.
    """

    def __init__(
        self,
        header: RunHeader,
        tags: Mapping[str, Sequence[str]] | None,
        prices: PriceTable,
        *,
        per_case: bool = True,
        case_order: Callable[[], Iterable[str]] | None = None,
    ):
        self.header = header
        self.tags = tags
        self.prices = prices
        self.keep_per_case = per_case
        self.max_repeat = 0
        self.s = Summary(
            run_id=header.run_id,
            kind=header.kind,
            dataset_path=header.dataset.path,
            dataset_sha256=header.dataset.sha256,
        )
        self.moments: dict[str, _Moments] = {}
        self.counts: dict[str, _Counts] = {}
        self.tag_counts: dict[str, list[int]] = {}  # tag -> [trials, failed]
        self.trials = 0
        self.answered = 0
        self.agent_tokens = [0, 0]  # input, output
        self.agent_known_usd = 0.0
        self.agent_unpriced_trials = 0
        self.correct = 0
        self.tag_moments: dict[str, dict[str, _Moments]] = {}
        self.total_lat = array("d")  # 8 bytes a value, not a float object each
        self.active_lat = array("d")
        self.per_case: dict[str, CaseAggregate] = {}
        self.examples = FailureExamples(case_order)
        self._case_order = case_order
        self.correct_by = correctness_scorer(header.scorer_names)
        self.attr_wrong = [0, 0, 0]  # retrieval, model, unknown
        self.unknown_models: set[str] = set()
        self.cache = CacheTally(prices)  # the replay cache's section, counted apart

    def add(self, rec: Trial, scores: Mapping[str, Score] | None = None) -> None:
        """Count one trial; ``scores`` defaults to ``rec.scores`` (a TrialRecord)."""
        if scores is None:
            if not isinstance(rec, TrialRecord):
                raise TypeError("a Trial without a scores mapping")
            scores = rec.scores
        if self.correct_by is None:
            self.correct_by = correctness_scorer(scores)
        if self.keep_per_case and isinstance(rec, TrialRecord):
            agg = self.per_case.get(rec.case_id)
            if agg is None:
                agg = self.per_case[rec.case_id] = CaseAggregate()
            agg.add(rec)
        self.fold(contribution(rec, scores, self.prices, self.correct_by))

    def add_contribution(self, c: Contribution) -> None:
        """:meth:`add` for a trial's :data:`~agenteval.summary.contribution.Contribution`
        computed elsewhere (a worker process) with :attr:`correct_by`. Needs
        :attr:`correct_by` set and no per-case aggregates (``per_case=False``): the
        contribution carries no record to aggregate."""
        if self.correct_by is None or self.keep_per_case:
            raise ValueError("add_contribution needs correct_by and per_case=False")
        self.fold(c)

    def fold(self, c: Contribution) -> None:
        """The summary's one fold: counts, sums and lists of one trial's contribution, in
        the order they come (float sums depend on it)."""
        case_id, repeat, answered, raw, lat_total, lat_active = c[:6]
        agent, judge, user, correct, retries, failure, attribution, cached = c[6:]
        self.trials += 1
        self.answered += answered
        if repeat > self.max_repeat:
            self.max_repeat = repeat
        valued = self._scores(raw)
        tags = self.tags.get(case_id) if self.tags else None
        if tags:
            self._tag_fold(tags, failure is not None, valued)
        if lat_total is not None:
            self.total_lat.append(lat_total)
        if lat_active is not None:
            self.active_lat.append(lat_active)
        self._cost(agent, judge, user)
        self.correct += correct
        self._retries(retries)
        if failure is not None:
            self._failure(case_id, *failure)
        if attribution is not None:
            self.attr_wrong[attribution] += 1
        self.cache.fold(lat_total, cached)

    def _scores(
        self, raw: list[tuple[str, str, float | None, bool]]
    ) -> list[tuple[str, float, bool]]:
        """Count each score; the valued ones (passed or failed) as (name, value, passed)."""
        # The hottest loop of a live summary (a dozen scores per trial): inlined counters.
        counts, moments = self.counts, self.moments
        valued = []
        for name, status, value, usage in raw:
            ss = counts.get(name)
            if ss is None:
                self.s.scorers[name] = ScorerSummary()
                ss = counts[name] = _Counts()
                moments[name] = _Moments()
            ss.trials += 1
            if usage:
                ss.judge = True
            if status == "not_applicable":
                ss.not_applicable += 1
            elif status == "error":
                ss.errors += 1
            elif status == "inconclusive":
                ss.inconclusive += 1
            else:  # passed or failed: a value
                x: float = value  # type: ignore[assignment]
                if x != 0.0 and x != 1.0:
                    ss.binary = False
                passed = status == "passed"
                m = moments[name]  # _Moments.add, inlined (a dozen a trial)
                m.n += 1
                d = x - m.mean
                m.mean += d / m.n
                m.m2 += d * (x - m.mean)
                m.passed += passed
                valued.append((name, x, passed))
        return valued

    def _tag_fold(
        self, tags: Sequence[str], failed: bool, valued: list[tuple[str, float, bool]]
    ) -> None:
        for tag in tags if len(tags) == 1 else dict.fromkeys(tags):
            ts = self.tag_counts.get(tag)
            if ts is None:
                self.s.tags[tag] = TagSummary()
                ts = self.tag_counts[tag] = [0, 0]
                self.tag_moments[tag] = {}
            ts[0] += 1
            ts[1] += failed
            moments = self.tag_moments[tag]
            for name, value, passed in valued:
                m = moments.get(name)
                if m is None:
                    m = moments[name] = _Moments()
                m.n += 1  # _Moments.add, inlined (a dozen a trial per tag)
                d = value - m.mean
                m.mean += d / m.n
                m.m2 += d * (value - m.mean)
                m.passed += passed

    def _cost(self, agent: Priced, judge: list[Priced], user: Priced | None) -> None:
        cost = self.s.cost
        self.agent_tokens[0] += agent[0]
        self.agent_tokens[1] += agent[1]
        if agent[2] is None:
            self.agent_unpriced_trials += 1
            self.unknown_models.update(agent[3])
        else:
            self.agent_known_usd += agent[2]
        for tin, tout, usd, unknown in judge:
            cost.judge_tokens.input += tin
            cost.judge_tokens.output += tout
            if usd is None:
                cost.judge_unpriced_scores += 1
                self.unknown_models.update(unknown)
            else:
                cost.judge_known_usd += usd
        if user is not None:  # a simulated user's usage, priced apart
            cost.user_tokens.input += user[0]
            cost.user_tokens.output += user[1]
            if user[2] is None:
                cost.user_unpriced_trials += 1
                self.unknown_models.update(user[3])
            else:
                cost.user_known_usd += user[2]

    def _retries(self, retries: list[tuple[str, float]]) -> None:
        r = self.s.retries
        if retries:
            r.trials_with_retries += 1
        for reason, wait_s in retries:
            r.total += 1
            r.wait_s += wait_s
            rc = r.by_reason.setdefault(reason, ReasonCount())
            rc.count += 1
            rc.wait_s += wait_s

    def _failure(self, case_id: str, cause: str, message: str) -> None:
        f = self.s.failures
        self.s.failed += 1
        f.total += 1
        cc = f.by_cause.get(cause)
        if cc is None:
            cc = f.by_cause[cause] = CauseCount(message=message[:500])
        cc.count += 1
        self.examples.add(cc, case_id, message)

    def _flush_counters(self) -> None:
        s, c = self.s, self.s.cost
        s.trials, s.answered = self.trials, self.answered
        c.agent_tokens.input, c.agent_tokens.output = self.agent_tokens
        c.agent_known_usd = self.agent_known_usd
        c.agent_unpriced_trials = self.agent_unpriced_trials
        c.correct = self.correct
        for name, k in self.counts.items():
            ss = s.scorers[name]
            ss.trials, ss.errors, ss.inconclusive = k.trials, k.errors, k.inconclusive
            ss.not_applicable, ss.judge, ss.binary = k.not_applicable, k.judge, k.binary
        for tag, (trials, failed) in self.tag_counts.items():
            s.tags[tag].trials, s.tags[tag].failed = trials, failed

    def finish_streamed(self, run_dir: str | Path) -> Summary:
        """:meth:`finish` for an accumulator built with ``per_case=False`` over the trials
        of ``run_dir``: the id -> tags map is freed first, and per-case aggregates are built
        in a second pass over the trials only when the run has repeats."""
        self.tags = None  # freed before finish() sorts the latencies
        self.examples.forget_order()
        if self.max_repeat > 0:
            self.keep_per_case = True
            self.per_case = aggregate_cases(iter_trials(run_dir))
        return self.finish()

    def finish(self) -> Summary:
        self._flush_counters()
        s = self.s
        # without per-case aggregates every trial is its own case: summarize() keeps them
        # unless all repeats are 0, and a run holds each (case_id, repeat) only once
        s.cases = len(self.per_case) if self.keep_per_case else s.trials
        for name, ss in s.scorers.items():
            m = self.moments[name]
            ss.applicable, ss.passed = m.n, m.passed
            if m.n:
                ss.mean = m.mean
                ss.pass_rate = m.passed / m.n
                if self.max_repeat > 0 and self.keep_per_case:  # repeats: cluster by case
                    cases = case_scores(self.per_case, name)
                    lo, hi = stats.clustered_pass_rate_interval(
                        [(c.passed, c.applicable) for c in cases]
                    )
                    ci = stats.clustered_mean_interval([(c.applicable, c.total) for c in cases])
                    how = "-clustered"
                else:
                    lo, hi = stats.wilson_interval(m.passed, m.n)
                    ci, how = stats.mean_interval(m.n, m.mean, m.m2), ""
                ss.pass_rate_ci = Interval(low=lo, high=hi, method="wilson" + how)
                if ci is not None:
                    ss.mean_ci = Interval(low=ci[0], high=ci[1], method="t" + how)
            s.scorer_errors[name] = ss.errors
            s.inconclusive[name] = ss.inconclusive
        for tag, ts in s.tags.items():
            for name, m in self.tag_moments[tag].items():
                ts.scorers[name] = TagScorer(
                    applicable=m.n, passed=m.passed, mean=m.mean, pass_rate=m.passed / m.n
                )
        s.latency.total = distribution(self.total_lat.tolist())
        s.latency.active = distribution(self.active_lat.tolist())
        self._finish_cost()
        s.cache = self.cache.result(s.cost.agent_usd)
        if self.correct_by is not None and self.correct_by in s.scorers:
            a = self.attr_wrong
            s.attribution = Attribution(
                correct_by=self.correct_by,
                wrong=sum(a),
                retrieval=a[0],
                model=a[1],
                unknown=a[2],
            )
        if self._case_order is not None and self.max_repeat > 0:
            self.per_case = in_dataset_order(self.per_case, self._case_order())
        s.repeats = repeat_summary(self.per_case)
        s.methods = {
            "pass_rate_ci": "Wilson score interval, 95%"
            + (" on the case-clustered effective n" if self.max_repeat > 0 else ""),
            "mean_ci": "Student t-interval, 95%, clipped to [0, 1]"
            + (", case-clustered standard error" if self.max_repeat > 0 else ""),
            "percentiles": "linear interpolation",
            "pass_at_k": "unbiased estimator 1 - C(n-c,k)/C(n,k), mean over cases",
            "pass_hat_k": "C(c,k)/C(n,k), mean over cases",
        }
        return s

    def _finish_cost(self) -> None:
        c = self.s.cost
        c.correct_by = self.correct_by
        # An agent that reports no tokens at all has an unknown cost, not a zero one.
        c.agent_usage_recorded = c.agent_tokens.input + c.agent_tokens.output > 0
        known = c.agent_unpriced_trials == 0 and c.agent_usage_recorded
        c.agent_usd = c.agent_known_usd if known else None
        c.judge_usd = c.judge_known_usd if c.judge_unpriced_scores == 0 else None
        c.user_usd = c.user_known_usd if c.user_unpriced_trials == 0 else None
        c.unknown_models = sorted(self.unknown_models)
        if c.agent_usd is not None and c.judge_usd is not None and c.user_usd is not None:
            c.total_usd = c.agent_usd + c.judge_usd + c.user_usd
            if self.s.trials:
                c.per_trial_usd = c.total_usd / self.s.trials
            if c.correct:
                c.per_correct_usd = c.total_usd / c.correct
        if c.agent_usd is not None and c.correct:
            c.agent_per_correct_usd = c.agent_usd / c.correct
