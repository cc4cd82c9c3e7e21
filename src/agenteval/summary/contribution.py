"""What one trial adds to a summary, in plain values.

Every summary is a fold of these: :meth:`agenteval.summary.accumulator.Accumulator.add`
computes a trial's :data:`Contribution` and folds it, and ``rescore --processes`` workers
compute the same values where the trial is and send them to the driver, which folds them
in the trials' order with the same :meth:`~agenteval.summary.accumulator.Accumulator.fold`:
the summary is the same to the last bit, and the driver does not read the new run back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agenteval.llm.pricing import PriceTable
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial, Usage

__all__ = ["Contribution", "Priced", "contribution", "priced", "user_usage"]


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
    tuple[int, Priced] | None,  # calls served from the replay cache: (count, their usage)
]
"""What one trial adds to a summary, in plain values (they pickle cheaply), computed by
:func:`contribution` and folded by :meth:`Accumulator.fold` in the trials' order (float
sums depend on their order: partial summaries merged would not be bit-identical)."""


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
    rec: Trial, scores: Mapping[str, Score], prices: PriceTable, correct_by: str | None
) -> Contribution:
    """What ``rec`` with ``scores`` adds to a summary (see :data:`Contribution`);
    ``correct_by`` is the scorer that defines a correct answer (None: no correctness
    count, no attribution)."""
    usage = user_usage(rec)
    user = priced(prices, usage) if usage else None
    verdict = scores.get(correct_by) if correct_by is not None else None
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
        _cached(prices, rec),
    )


def _cached(prices: PriceTable, rec: Trial) -> tuple[int, Priced] | None:
    """How many calls of ``rec`` the replay cache answered, and their usage priced."""
    if not rec.cached:
        return None
    usage = [
        Usage(model=c.model, input_tokens=c.input_tokens, output_tokens=c.output_tokens)
        for c in rec.cached
    ]
    return len(rec.cached), priced(prices, usage)


def user_usage(rec: Trial) -> list[Usage]:
    """A simulated user's usage (``metadata.conversation.user.usage``). Metadata is the
    agent's or a trace's, never trusted: entries that are not token usage are left out."""
    conv = rec.metadata.get("conversation") if rec.metadata else None
    user = conv.get("user") if isinstance(conv, dict) else None
    raw = user.get("usage") if isinstance(user, dict) else None
    out: list[Usage] = []
    for u in raw if isinstance(raw, list) else ():
        if isinstance(u, dict):
            try:
                out.append(Usage.model_validate(u))
            except ValueError:
                continue
    return out
