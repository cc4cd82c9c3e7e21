"""Faithfulness and retrieval (SPEC §4): is the answer backed by what the tools returned?

A *tool result* is the ``result`` of any call that has one (not None), as text: a string
as is, anything else as JSON. Errors are not results. These checks are judge-free: they
test faithfulness to the sources, not truth in the world — a right answer computed in the
model's head fails ``tool_faithfulness``.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Any

from agenteval._util.identity import Identity
from agenteval._util.text import (
    TOLERANCE,
    any_same,
    as_text,
    find_numbers,
    fmt_num,
    normalize,
    quote,
    ratio,
    squash,
)
from agenteval.cases.case import Case
from agenteval.scorers._answer import unanswered
from agenteval.scoring.score import BINARY_THRESHOLD, Score, not_applicable
from agenteval.scoring.spec import scorer
from agenteval.trials.trial import ToolCall, Trial

_SHOWN = 5
_EPS = 1e-9

# Scores whose reason never varies are built once and shared (Score is treated as immutable).
_EMPTY_ANSWER = not_applicable("answer is empty: nothing to check")
_NO_RESULTS = not_applicable("no tool results to check the answer against")
_NO_DOCS = not_applicable("case has no relevant_docs")
_NO_CANARY = not_applicable("case has no canary: nothing to check")


class _Results:
    """A trial's tool results as text, and what the scorers here derive from them."""

    __slots__ = ("_joined", "_numbers", "texts")

    def __init__(self, calls: list[ToolCall]) -> None:
        self.texts = [as_text(c.result) for c in calls if c.result is not None]
        self._joined: str | None = None
        self._numbers: list[float] | None = None

    @property
    def joined(self) -> str:
        """Every result, one per line: a token never spans two results (see callers)."""
        if self._joined is None:
            self._joined = "\n".join(self.texts)
        return self._joined

    @property
    def numbers(self) -> list[float]:
        """Every number in some result, sorted (a newline never joins or splits a number)."""
        if self._numbers is None:
            self._numbers = sorted(set(find_numbers(self.joined)))
        return self._numbers


@functools.lru_cache(maxsize=16)
def _trial_results(calls: Identity) -> _Results:
    # tool_faithfulness and retrieval_recall read the same trial's results one after the
    # other; keyed by the identity of the trial's tool_calls list (held while cached).
    return _Results(calls.obj)


def _results(trial: Trial) -> _Results:
    return _trial_results(Identity(trial.tool_calls))


def _question_text(case: Case) -> str:
    if isinstance(case.input, str):
        return case.input
    parts: list[str] = []
    for m in case.input:
        content: Any = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


def _in_sorted(x: float, values: list[float]) -> bool:
    i = bisect.bisect_left(values, x - TOLERANCE - _EPS)
    return i < len(values) and values[i] <= x + TOLERANCE + _EPS


def _names(values: list[str]) -> str:
    more = len(values) - _SHOWN
    return ", ".join(values[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


@scorer("tool_faithfulness", threshold=BINARY_THRESHOLD, kind="graded")
def tool_faithfulness(case: Case, trial: Trial) -> Score:
    """Share of the answer's numbers found in some tool result (threshold 1.0: every one).

    Each distinct number in the answer is a claim, unless the same value also appears in
    the case's input (the question): those are repeated, not claimed, and are ignored. A
    claim is supported when a number in some tool result has the same value within 0.01
    (``19,753`` matches ``19753.0``). Value = supported / claims. When the answer makes no
    number claim, its normalised text (case, accents, white space, final period forgiven)
    must appear inside some normalised tool result: 1.0 or 0.0.

    Not applicable when the agent never answered, the answer is empty, or the trial has no
    tool result at all.
    """
    na = unanswered(trial)
    if na is not None:
        return na
    answer = trial.output or ""
    if not answer.strip():
        return _EMPTY_ANSWER
    if not trial.tool_calls:  # no call, so no result
        return _NO_RESULTS
    shared = _results(trial)
    results = shared.texts
    if not results:
        return _NO_RESULTS
    numbers = list(dict.fromkeys(find_numbers(answer)))
    asked = find_numbers(_question_text(case)) if numbers else []
    claims = [x for x in numbers if not any_same(x, asked)]
    ignored = len(numbers) - len(claims)
    note = f" ({ignored} number(s) from the question ignored)" if ignored else ""
    if claims:
        source = shared.numbers
        missing = [fmt_num(x) for x in claims if not _in_sorted(x, source)]
        found, total = len(claims) - len(missing), len(claims)
        reason = f"{found} of {total} numbers in the answer found in tool results"
        reason += f" -> {ratio(found, total)}{note}"
        if missing:
            reason += f"; not found: {_names(missing)}"
        return Score(found / total, reason)
    text = " ".join(normalize(answer).split())
    for i, result in enumerate(results):
        if text in squash(result):
            return Score(
                1.0, f"answer has no number claims{note}; its text appears in result {i + 1}"
            )
    return Score(
        0.0,
        f"answer has no number claims{note}; its text {quote(text)} appears in none of"
        f" {len(results)} tool results",
    )


@functools.lru_cache(maxsize=4096)
def _id_pattern(doc_id: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(doc_id)}(?![\w-])")


def _returned(doc_id: str, results: _Results) -> bool:
    # A plain substring test first: most results do not hold most ids at all. Searching
    # the newline-joined results is the same as searching each one, since a newline is
    # neither a word character nor "-" (it bounds a token as the text's edge does) —
    # unless the id itself holds a newline, or there is no result to search.
    texts = results.texts
    if not texts:  # no result at all (the joined text "" would hold an empty id)
        return False
    if "\n" in doc_id:
        return any(doc_id in r and _id_pattern(doc_id).search(r) for r in texts)
    joined = results.joined
    return doc_id in joined and _id_pattern(doc_id).search(joined) is not None


@scorer("retrieval_recall", threshold=BINARY_THRESHOLD, kind="graded")
def retrieval_recall(case: Case, trial: Trial) -> Score:
    """Share of ``case.relevant_docs`` returned by any tool call (threshold 1.0: all found).

    A document counts as returned when its id appears as a whole token in some tool result:
    not preceded or followed by a letter, digit, ``_`` or ``-`` (``doc-1`` is not found in
    ``doc-12``). Value = found / relevant (distinct ids). An agent that answered without
    calling a tool scores 0.

    Not applicable when the case has no ``relevant_docs``, or when the agent never answered
    and made no call (calls made before a failure are still judged).
    """
    if not case.relevant_docs:
        return _NO_DOCS
    wanted = list(dict.fromkeys(case.relevant_docs))
    na = unanswered(trial)
    if na is not None and not trial.tool_calls:
        return not_applicable(f"{na.reason} and made no tool call")
    results = _results(trial)
    missing = [d for d in wanted if not _returned(d, results)]
    found, total = len(wanted) - len(missing), len(wanted)
    reason = f"found {found} of {total} relevant docs in {len(results.texts)} tool results"
    reason += f" -> {ratio(found, total)}"
    if missing:
        reason += f"; missing: {_names(missing)}"
    return Score(found / total, reason)


@scorer("tool_grounding", threshold=BINARY_THRESHOLD, kind="graded")
def tool_grounding(case: Case, trial: Trial) -> Score:
    """Share of the case's canary values found in the answer (threshold 1.0: all of them).

    A canary is a value reachable only through a tool; finding it in the answer shows the
    answer used the tool. Matching ignores case. Empty canary strings are skipped. Not
    applicable when the case has no canary (nothing to check), or when the agent never
    answered.
    """
    if not case.canary:
        return _NO_CANARY
    canaries = [c for c in dict.fromkeys(case.canary) if c.strip()]
    if not canaries:
        return _NO_CANARY
    na = unanswered(trial)
    if na is not None:
        return na
    answer = (trial.output or "").casefold()
    missing = [c for c in canaries if c.casefold() not in answer]
    found, total = len(canaries) - len(missing), len(canaries)
    reason = f"{found} of {total} canary values in the answer -> {ratio(found, total)}"
    if missing:
        reason += f"; missing: {_names([quote(m, 40) for m in missing])}"
    return Score(found / total, reason)
