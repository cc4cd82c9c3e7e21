"""Correctness: does the answer equal the expected one (SPEC §4, ``exact_match``)."""

from __future__ import annotations

from agenteval._util.text import fmt_num, normalize, parse_normalized, quote, same_number
from agenteval.cases.case import Case
from agenteval.scorers._answer import unanswered
from agenteval.scoring.score import BINARY_THRESHOLD, Score, not_applicable
from agenteval.scoring.spec import scorer
from agenteval.trials.trial import Trial

_NO_EXPECTED = not_applicable("case has no expected answer")


@scorer("exact_match", threshold=BINARY_THRESHOLD)
def exact_match(case: Case, trial: Trial) -> Score:
    """1.0 when the answer equals ``case.expected``, else 0.0 (binary, threshold 1.0).

    When both the expected value and the whole answer read as one number (``19,753``,
    ``19753.0``, ``-3.5``, ``1e3``; a currency sign, percent sign or any other word makes it
    text), they match when they differ by at most 0.01. Otherwise both are normalised —
    case folded, accents removed, surrounding white space and one final period dropped —
    and must be equal; inner white space must match exactly.

    Not applicable when the case has no ``expected``, or when the agent never answered.
    """
    if case.expected is None:
        return _NO_EXPECTED
    na = unanswered(trial)
    if na is not None:
        return na
    answer = trial.output or ""
    expected = str(case.expected)
    # Each side is normalised once, for both the number and the text comparison.
    n_want = normalize(expected)
    n_got = n_want if answer == expected else normalize(answer)
    want = parse_normalized(n_want)
    # The answer's number matters only when the expected value is one.
    got = None if want is None else want if n_got is n_want else parse_normalized(n_got)
    if want is not None and got is not None:
        diff = abs(want - got)
        ok = same_number(want, got)
        verdict = "within" if ok else "more than"
        return Score(
            1.0 if ok else 0.0,
            f"expected {fmt_num(want)}, got {fmt_num(got)}: differ by {diff:.4g}, {verdict} 0.01",
        )
    if n_want == n_got:
        return Score(1.0, f"answer equals expected {quote(expected)} (after normalising)")
    kind = " (expected a number)" if want is not None else ""
    return Score(0.0, f"expected {quote(expected)}{kind}, got {quote(answer)}")
