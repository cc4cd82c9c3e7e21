"""``tool_call_match``: were the right calls made, with the right arguments?

A case's ``expected_calls`` (grammar in :mod:`agenteval.cases.calls` and
docs/formats.md) is compared with the calls the agent made (``trial.tool_calls``, every
entry, in order). Expected call ``e`` *matches* made call ``a`` when the names are equal
and ``a``'s arguments satisfy ``e``'s argument spec.

**Match modes** (the case's ``match_mode``, else the scorer's default, ``unordered``):

=============  ==========================================================  ================
mode           passes when                                                 value
=============  ==========================================================  ================
``strict``     the made calls are the expected calls, in the same order     ``k/(n+m-k)``
``unordered``  the same calls, in any order                                 ``k/(n+m-k)``
``subset``     every expected call was made; other calls are allowed        ``k/n``
``superset``   every call made was expected; expected ones may be missing   ``k/m``
``in_order``   every expected call was made, in order; others in between    ``k/n``
=============  ==========================================================  ================

``n`` is the number of expected calls, ``m`` the number made and ``k`` the number
matched: a *maximum* one-to-one matching (each expected call and each made call used at
most once, so a duplicated expected call needs two matching calls) — over any pairs for
``unordered``, ``subset`` and ``superset`` (:func:`max_matching`), over order-preserving
pairs for ``strict`` and ``in_order`` (:func:`ordered_matching`, a longest common
subsequence). A ratio with a zero denominator is 1.0. Graded, passes at 1.0, which is
exactly the pass condition above. ``expected_calls: []`` says no call is expected.

Not applicable when the case has no ``expected_calls`` or the agent never answered.
The reason names the first divergence: ``call 2: expected get_weather(city='Oslo'), got
get_weather(city='Olso') — city differs`` (expected calls numbered from 1; a made call
at another position is named ``#3 get_weather(...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agenteval.cases.calls import CallSpec, show_call
from agenteval.cases.case import Case
from agenteval.scorers._answer import unanswered
from agenteval.scorers._match import (
    MATCH_MODES,
    match_in_mode,
    max_matching,
    ordered_matching,
)
from agenteval.scoring.score import Score, not_applicable
from agenteval.scoring.spec import scorer
from agenteval.trials.trial import ToolCall, Trial

__all__ = [
    "MATCH_MODES",
    "CallMatch",
    "make_tool_call_match",
    "match_calls",
    "max_matching",
    "ordered_matching",
    "tool_call_match",
]

_NO_EXPECTED = not_applicable("case has no expected_calls")


@dataclass(frozen=True, slots=True)
class CallMatch:
    """The outcome of comparing expected calls with made calls in one mode."""

    mode: str
    expected: int
    made: int
    pairs: tuple[int | None, ...]  # expected index -> made index
    value: float
    reason: str

    @property
    def matched(self) -> int:
        """How many expected calls were matched (``k``)."""
        return sum(p is not None for p in self.pairs)


def match_calls(specs: Sequence[CallSpec], calls: Sequence[ToolCall], mode: str) -> CallMatch:
    """Compare ``specs`` with ``calls`` in ``mode`` (see the module docstring)."""
    n, m = len(specs), len(calls)
    problems = [[s.problem(c.name, c.arguments) for c in calls] for s in specs]
    found = match_in_mode([[p is None for p in row] for row in problems], m, mode)
    pairs, k, value = list(found.pairs), found.matched, found.value
    if value >= 1.0:
        other = f", {m - k} other calls allowed" if m > k else ""
        if n == 0:
            reason = f"no call expected, {m} made ({mode})" if m else "no call expected, none made"
        else:
            reason = f"{k} of {n} expected calls matched ({mode}){other}"
    else:
        reason = f"{k} of {n} expected calls matched, {m} made ({mode}): " + _divergence(
            specs, calls, problems, pairs, mode
        )
    return CallMatch(mode, n, m, found.pairs, value, reason)


def _divergence(
    specs: Sequence[CallSpec],
    calls: Sequence[ToolCall],
    problems: list[list[str | None]],
    pairs: list[int | None],
    mode: str,
) -> str:
    """The first difference a person needs to see."""
    n, m = len(specs), len(calls)
    if mode == "strict":  # position by position
        for i in range(max(n, m)):
            if i < n and i < m and problems[i][i] is None:
                continue
            if i >= m:
                return f"call {i + 1}: expected {specs[i].describe()}, not made"
            if i >= n:
                return f"call {i + 1}: {_shown(calls[i])} was not expected"
            return _differs(specs, calls, problems, i, i)
    used = {j for j in pairs if j is not None}
    free = [j for j in range(m) if j not in used]
    if mode != "superset":
        for i, j in enumerate(pairs):
            if j is not None:
                continue
            if mode == "in_order":  # made calls after the last matched one before i
                after = max((p for p in pairs[:i] if p is not None), default=-1)
                candidates = [f for f in free if f > after]
            else:
                candidates = free
            same = [f for f in candidates if calls[f].name == specs[i].name]
            pick = same[0] if same else (candidates[0] if candidates else None)
            if pick is None:
                return f"call {i + 1}: expected {specs[i].describe()}, not made"
            return _differs(specs, calls, problems, i, pick)
    j = free[0]
    return f"#{j + 1} {_shown(calls[j])} was not expected"


def _differs(
    specs: Sequence[CallSpec],
    calls: Sequence[ToolCall],
    problems: list[list[str | None]],
    i: int,
    j: int,
) -> str:
    at = "" if i == j else f"#{j + 1} "
    why = problems[i][j] or "differs"
    return f"call {i + 1}: expected {specs[i].describe()}, got {at}{_shown(calls[j])} — {why}"


def _shown(call: ToolCall) -> str:
    return show_call(call.name, call.arguments)


def make_tool_call_match(mode: str = "unordered") -> Callable[[Case, Trial], Score]:
    """Build ``tool_call_match`` with ``mode`` as the default for cases without ``match_mode``."""
    if mode not in MATCH_MODES:
        raise ValueError(f"unknown match mode '{mode}' (known: {', '.join(MATCH_MODES)})")
    default = mode

    @scorer("tool_call_match", threshold=1.0, kind="graded")
    def tool_call_match(case: Case, trial: Trial) -> Score:
        """Matched expected calls, graded by match mode (see :mod:`agenteval.scorers.call_match`).

        Graded, threshold 1.0 (every expected call matched, nothing the mode forbids made).
        Not applicable without ``expected_calls`` or when the agent never answered.
        """
        specs = case.call_specs()
        if specs is None:
            return _NO_EXPECTED
        na = unanswered(trial)
        if na is not None:
            return na
        result = match_calls(specs, trial.tool_calls, case.match_mode or default)
        return Score(result.value, result.reason, 1.0)

    return tool_call_match


tool_call_match = make_tool_call_match()
"""``tool_call_match`` with the default mode ``unordered``."""
