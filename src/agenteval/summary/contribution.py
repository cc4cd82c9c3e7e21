"""What one trial adds to a summary, computed where the trial is and folded elsewhere.

``rescore --processes`` workers send each trial's :data:`Contribution` (plain values) and
the driver folds them with :func:`fold`, in the trials' order, with the arithmetic of
:meth:`agenteval.summary.accumulator.Accumulator.add`: the summary is the same to the last
bit, and the driver does not read the new run back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agenteval.llm.pricing import PriceTable
from agenteval.scoring.score import Score
from agenteval.summary.accumulator import Accumulator, _Counts, _Moments, _user_usage
from agenteval.summary.model import CauseCount, ReasonCount, ScorerSummary
from agenteval.trials.trial import Trial, Usage

__all__ = ["Contribution", "Priced", "contribution", "fold", "priced"]


Priced = tuple[int, int, float | None, tuple[str, ...]]
"""(input tokens, output tokens, USD or None when unpriced, the unknown models)."""

Contribution = tuple[
    str,  # case_id
    int,  # repeat
    bool,  # answered
    list[tuple[str, str, float | None, bool]],  # scores: (name, status, value, has usage)
    float | None,  # latency total_s
    float | None,  # latency active_s
    Priced,  # the agent's usage (see below)
    list[Priced],  # each score's usage that has some, in order
    Priced | None,  # a simulated user's usage
    bool,  # correct
    list[tuple[str, float]],  # retries: (reason, wait_s)
    tuple[str, str] | None,  # failure: (cause, message)
    int | None,  # attribution of a wrong answer: 0 retrieval, 1 model, 2 unknown
]
"""What one trial adds to a summary, in plain values, computed where the trial is (a
worker process) by :func:`contribution` and folded by :func:`fold`
in the driver. The driver folds them in the trials' order with the same arithmetic as
:meth:`Accumulator.add`, so the summary is the same to the last bit (float sums depend on
their order: partial summaries merged would not be)."""


def priced(prices: PriceTable, usage: Sequence[Usage]) -> Priced:
    cost = prices.cost(usage)
    unknown = tuple(sorted(prices.unknown_models(usage))) if cost is None else ()
    return (
        sum(u.input_tokens for u in usage),
        sum(u.output_tokens for u in usage),
        cost,
        unknown,
    )


def contribution(
    rec: Trial, scores: Mapping[str, Score], prices: PriceTable, correct_by: str
) -> Contribution:
    """What ``rec`` with ``scores`` adds to a summary (see :data:`Contribution`);
    ``correct_by`` is the accumulator's :attr:`Accumulator.correct_by` (never None)."""
    usage = _user_usage(rec)
    user = priced(prices, usage) if usage else None
    verdict = scores.get(correct_by)
    attribution = None
    if rec.output is not None and verdict is not None and verdict.passed is False:
        recall = scores.get("retrieval_recall")
        if recall is None or recall.value is None:
            attribution = 2
        else:
            attribution = 0 if recall.value < 1.0 else 1
    f = rec.failure
    return (
        rec.case_id,
        rec.repeat,
        rec.output is not None,
        [(n, sc.status, sc.value, bool(sc.usage)) for n, sc in scores.items()],
        rec.latency.total_s,
        rec.latency.active_s,
        priced(prices, rec.usage),
        [priced(prices, sc.usage) for sc in scores.values() if sc.usage],
        user,
        verdict is not None and bool(verdict.passed),
        [(r.reason, r.wait_s) for r in rec.retries],
        None if f is None else (f.cause, f.message),
        attribution,
    )


def fold(acc: Accumulator, c: Contribution) -> None:
    """:meth:`Accumulator.add` for a trial's :data:`Contribution`: the same counts, sums and
    lists in the same order. Needs :attr:`correct_by` set (the worker computed
    ``correct`` with it) and no per-case aggregates (``per_case=False``)."""
    if acc.correct_by is None or acc.keep_per_case:
        raise ValueError("add_contribution needs correct_by and per_case=False")
    case_id, repeat, answered, raw, lat_total, lat_active = c[:6]
    agent, judge, user, correct, retries, failure, attribution = c[6:]
    acc.trials += 1
    acc.answered += answered
    if repeat > acc.max_repeat:
        acc.max_repeat = repeat
    # _scores and _tags, inlined on tuples (this fold is most of the driver's time)
    counts, moments = acc.counts, acc.moments
    valued = []
    for name, status, value, usage in raw:
        ss = counts.get(name)
        if ss is None:
            acc.s.scorers[name] = ScorerSummary()
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
            m = moments[name]
            m.n += 1
            d = x - m.mean
            m.mean += d / m.n
            m.m2 += d * (x - m.mean)
            passed = status == "passed"
            m.passed += passed
            valued.append((name, x, passed))
    tags = acc.tags.get(case_id) if acc.tags else None
    if tags:
        acc._tag_fold(tags, failure is not None, valued)
    if lat_total is not None:
        acc.total_lat.append(lat_total)
    if lat_active is not None:
        acc.active_lat.append(lat_active)
    # _cost
    cost = acc.s.cost
    acc.agent_tokens[0] += agent[0]
    acc.agent_tokens[1] += agent[1]
    if agent[2] is None:
        acc.agent_unpriced_trials += 1
        acc.unknown_models.update(agent[3])
    else:
        acc.agent_known_usd += agent[2]
    for tin, tout, usd, unknown in judge:
        cost.judge_tokens.input += tin
        cost.judge_tokens.output += tout
        if usd is None:
            cost.judge_unpriced_scores += 1
            acc.unknown_models.update(unknown)
        else:
            cost.judge_known_usd += usd
    if user is not None:
        cost.user_tokens.input += user[0]
        cost.user_tokens.output += user[1]
        if user[2] is None:
            cost.user_unpriced_trials += 1
            acc.unknown_models.update(user[3])
        else:
            cost.user_known_usd += user[2]
    acc.correct += correct
    # _retries_failures
    r = acc.s.retries
    if retries:
        r.trials_with_retries += 1
    for reason, wait_s in retries:
        r.total += 1
        r.wait_s += wait_s
        rc = r.by_reason.setdefault(reason, ReasonCount())
        rc.count += 1
        rc.wait_s += wait_s
    if failure is not None:
        cause, message = failure
        f = acc.s.failures
        acc.s.failed += 1
        f.total += 1
        cc = f.by_cause.get(cause)
        if cc is None:
            cc = f.by_cause[cause] = CauseCount(message=message[:500])
        cc.count += 1
        acc._example(cc, case_id, message)
    if attribution is not None:
        acc.attr_wrong[attribution] += 1
