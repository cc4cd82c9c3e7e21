"""``answer_match``: does the answer contain, match or state the expected answer?

``exact_match`` compares the whole answer; a real model says "It is 19,753." and fails it.
``answer_match`` compares in a mode, chosen per case with the metadata key ``match``
(else the scorer's ``mode`` setting, default ``normalised``):

- ``normalised``: equal after case folding, accent removal, trimming and dropping one final
  period (the text rule of ``exact_match``);
- ``contains``: the expected text occurs in the answer, ignoring case, accents and runs of
  white space;
- ``regex``: ``expected`` is a Python regular expression that matches somewhere in the
  answer (``re.search``, case-sensitive unless the pattern says ``(?i)``);
- ``numeric``: some number stated anywhere in the answer (``19,753``, ``-3.5``, ``1e3``) is
  within 0.01 of the expected number (the tolerance of ``exact_match``); the answer's
  other numbers do not matter.

Not applicable when the case has no ``expected`` or the agent never answered. An unknown
mode, a ``numeric`` case whose ``expected`` is not a number, or a ``regex`` that does not
compile is a scorer error naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agenteval._util.text import (
    find_numbers,
    fmt_num,
    normalize,
    parse_number,
    quote,
    same_number,
    squash,
)
from agenteval.cases.case import Case
from agenteval.scorers._answer import unanswered
from agenteval.scoring.score import BINARY_THRESHOLD, Score, not_applicable
from agenteval.scoring.spec import Scorer, scorer
from agenteval.trials.trial import Trial

__all__ = ["MATCH_MODES", "answer_match", "make_answer_match", "match_answer"]

MATCH_MODES = ("normalised", "contains", "regex", "numeric")
"""Modes of ``answer_match``."""


def match_answer(case: Case, trial: Trial, default: str = "normalised") -> Score:
    """The comparison of the module docstring (``default``: the mode without ``match``)."""
    if case.expected is None:
        return not_applicable("case has no expected answer")
    mode = case.metadata.get("match", default)
    if mode not in MATCH_MODES:
        raise ValueError(f"unknown match mode {mode!r} (known: {', '.join(MATCH_MODES)})")
    na = unanswered(trial)
    if na is not None:
        return na
    answer, expected = trial.output or "", str(case.expected)
    if mode == "numeric":
        want = parse_number(expected)
        if want is None:
            raise ValueError(f"match 'numeric' needs a number as expected, got {expected!r}")
        got = find_numbers(answer)
        if any(same_number(want, g) for g in got):
            return Score(1.0, f"numeric: answer holds {fmt_num(want)} (within 0.01)")
        shown = ", ".join(fmt_num(g) for g in got[:5]) or "no number"
        return Score(0.0, f"numeric: expected {fmt_num(want)}, answer holds {shown}")
    if mode == "contains":
        ok = squash(expected) in squash(answer)
        verb = "contains" if ok else "does not contain"
        return Score(1.0 if ok else 0.0, f"contains: answer {verb} {quote(expected)}")
    if mode == "regex":
        try:
            pattern = re.compile(expected)
        except re.error as e:
            raise ValueError(
                f"match 'regex': expected {expected!r} does not compile: {e}"
            ) from None
        ok = pattern.search(answer) is not None
        verb = "matches" if ok else "does not match"
        return Score(1.0 if ok else 0.0, f"regex: answer {verb} {quote(expected)}")
    if normalize(expected) == normalize(answer):
        return Score(1.0, f"normalised: answer equals {quote(expected)}")
    return Score(0.0, f"normalised: expected {quote(expected)}, got {quote(answer)}")


def make_answer_match(mode: str = "normalised") -> Scorer:
    """``answer_match`` whose mode, for cases without ``match`` metadata, is ``mode``."""
    if mode not in MATCH_MODES:
        raise ValueError(
            f"scorer answer_match: unknown mode {mode!r} (known: {', '.join(MATCH_MODES)})"
        )

    @scorer("answer_match", threshold=BINARY_THRESHOLD)
    def answer_match(case: Case, trial: Trial) -> Score:
        return match_answer(case, trial, mode)

    answer_match.__doc__ = __doc__
    return answer_match


answer_match = make_answer_match()
"""``answer_match`` with the default mode (``normalised``)."""


def build(settings: Mapping[str, Any]) -> Scorer:
    """The built-in's builder: settings ``{"mode": ...}`` or nothing."""
    extra = sorted(set(settings) - {"mode"})
    if extra:
        raise ValueError(f"scorer answer_match: unknown setting(s) {extra} (allowed: mode)")
    mode = settings.get("mode")
    return answer_match if mode is None else make_answer_match(str(mode))
