"""Tool use, step by step (SPEC §4): each rung fails for a different reason.

What counts as a call: every entry of ``trial.tool_calls``, in order, including calls that
raised and calls whose arguments were not valid JSON. Calls are numbered from 1 in
reasons (``#2 search`` is the second call). Tool names compare exactly (case-sensitive).

Scorers that judge the agent's choices (``tool_selection``, ``trajectory_order``) are not
applicable when the agent never answered; scorers about the calls that were made
(``tool_arguments_valid``, ``tool_execution``, ``step_efficiency``, ``redundant_calls``)
still judge the calls that exist.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from agenteval._util.text import ratio
from agenteval.cases.arguments import ToolDefs, checker_for, valid_json_only
from agenteval.cases.case import Case
from agenteval.cases.tooldefs import IDEMPOTENT
from agenteval.scorers._answer import call_ref, unanswered
from agenteval.scorers._match import match_in_mode
from agenteval.scoring.score import BINARY_THRESHOLD, GRADED_THRESHOLD, Score, not_applicable
from agenteval.scoring.spec import scorer
from agenteval.trials.trial import ToolCall, Trial

_SHOWN = 3  # bad calls named in a reason before "and N more"

Scorer = Callable[[Case, Trial], Score]

# Scores whose reason never varies are built once and shared (Score is treated as immutable).
_NO_EXPECTED_TOOLS = not_applicable("case has no expected_tools")
_NO_TOOL_NEEDED = Score(1.0, "case needs no tool (expected_tools is empty)")
_NO_DEFS = not_applicable("no tool definitions known (trial, case or suite)")
_NO_CALLS = not_applicable("no tool calls made")
_NO_TRAJECTORY = not_applicable("case has no expected_trajectory")
_NO_NEED_KNOWN = not_applicable("case has no max_tool_calls, expected_trajectory or expected_tools")


def _listing(items: list[str]) -> str:
    shown = "; ".join(items[:_SHOWN])
    more = len(items) - _SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


@scorer("tool_selection", threshold=BINARY_THRESHOLD)
def tool_selection(case: Case, trial: Trial) -> Score:
    """1.0 when every tool in ``case.expected_tools`` was called at least as often as needed.

    Binary, threshold 1.0. Answering from memory fails it even when the answer is right.
    An empty ``expected_tools`` (``{}`` or ``[]``) needs nothing and passes. Not applicable
    when the case has no ``expected_tools``, or when the agent never answered.
    """
    needed = case.expected_tools
    if needed is None:
        return _NO_EXPECTED_TOOLS
    na = unanswered(trial)
    if na is not None:
        return na
    if not needed:
        return _NO_TOOL_NEEDED
    made: dict[str, int] = {}
    for c in trial.tool_calls:
        made[c.name] = made.get(c.name, 0) + 1
    short = []
    for name, count in needed.items():
        got = made.get(name, 0)
        if got < count:
            short.append(
                f"never called {name} (needed {count})"
                if got == 0
                else f"called {name} {got} of {count} times needed"
            )
    if short:
        return Score(0.0, "; ".join(short))
    wanted = ", ".join(f"{n} {made[n]}/{c}" for n, c in needed.items() if c > 0)
    return Score(1.0, f"every needed tool called often enough ({wanted or 'none needed'})")


def make_tool_arguments_valid(suite_tools: ToolDefs | None = None) -> Scorer:
    """Build ``tool_arguments_valid`` with ``suite_tools`` as the last source of definitions."""
    suite: ToolDefs = list(suite_tools or [])

    @scorer("tool_arguments_valid", threshold=BINARY_THRESHOLD)
    def tool_arguments_valid(case: Case, trial: Trial) -> Score:
        """1.0 when every call names a defined tool with arguments valid for its schema.

        Arguments must be valid JSON and validate against the tool's ``parameters`` JSON
        Schema (Draft 2020-12 unless the schema's ``$schema`` says otherwise). Binary,
        threshold 1.0. Definitions come from ``trial.tools``, else ``case.tools``, else the
        suite's (the first non-empty). Not applicable when no definitions are known or no
        calls were made; judged even when the agent never answered. A tool whose
        ``parameters`` is not a valid schema makes the scorer raise (a scorer error).
        """
        try:
            checker = checker_for(trial, case.tools, suite)
        except LookupError:  # a definition without a name counts as none
            checker = None
        if checker is None:
            return _NO_DEFS
        calls = trial.tool_calls
        if not calls:
            return _NO_CALLS
        bad = []
        for i, call in enumerate(calls):
            why = checker.problem(call)
            if why is not None:
                bad.append(f"{call_ref(i, call.name)}: {why}")
        if bad:
            return Score(0.0, f"{len(bad)} of {len(calls)} calls invalid: {_listing(bad)}")
        return Score(1.0, f"all {len(calls)} calls name a defined tool with valid arguments")

    return tool_arguments_valid


def make_tool_execution(suite_tools: ToolDefs | None = None) -> Scorer:
    """Build ``tool_execution`` with ``suite_tools`` as the last source of definitions."""
    suite: ToolDefs = list(suite_tools or [])

    @scorer("tool_execution", threshold=BINARY_THRESHOLD)
    def tool_execution(case: Case, trial: Trial) -> Score:
        """1.0 when every call with valid arguments ran without error (``error`` is None).

        Valid arguments are as ``tool_arguments_valid`` defines them when tool definitions
        are known (trial, else case, else suite), else simply arguments that parsed as
        JSON; calls with invalid arguments are left to that scorer. Binary, threshold 1.0
        ("every call"). Not applicable when no call has valid arguments; judged even when
        the agent never answered.
        """
        calls = trial.tool_calls
        if not calls:
            return _NO_CALLS
        try:
            checker = checker_for(trial, case.tools, suite)
        except LookupError:  # a definition without a name counts as none
            checker = None
        is_valid = _parsed if checker is None else checker.is_valid
        valid = [(i, c) for i, c in enumerate(calls) if is_valid(c)]
        if not valid:
            return not_applicable(f"none of the {len(calls)} calls had valid arguments")
        raised = [
            f"{call_ref(i, c.name)}: {_short(c.error)}" for i, c in valid if c.error is not None
        ]
        n = len(valid)
        if raised:
            return Score(
                0.0, f"{len(raised)} of {n} calls with valid arguments raised: {_listing(raised)}"
            )
        return Score(1.0, f"all {n} calls with valid arguments ran without error")

    return tool_execution


def _parsed(call: ToolCall) -> bool:
    return valid_json_only(call) is None


def _short(text: str | None, limit: int = 80) -> str:
    s = " ".join((text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


@scorer("trajectory_order", threshold=BINARY_THRESHOLD)
def trajectory_order(case: Case, trial: Trial) -> Score:
    """Whether the called tool names follow ``expected_trajectory``.

    Without a ``match_mode`` on the case: 1.0 when ``expected_trajectory`` is a subsequence
    of the called tool names, else 0.0 (binary). The expected tools must be called in that
    order; other calls before, between and after are allowed. Each expected step is matched
    to the earliest later call of that name.

    With a ``match_mode`` (as ``tool_call_match`` defines them, comparing names only):
    1.0 when the mode's condition holds, else 0.0 (binary, threshold 1.0, in both cases),
    with the partial score in the reason — from the maximum matching of steps to calls
    (a longest common subsequence for ``strict`` and ``in_order``): ``k/(n+m-k)`` for
    ``strict`` and ``unordered``, ``k/n`` for ``subset`` and ``in_order``, ``k/m`` for
    ``superset`` (``n`` steps, ``m`` calls, ``k`` matched; a repeated step needs that many
    calls). For a graded score of names only, give ``tool_call_match`` calls with
    ``extra_arguments: true`` and no arguments. ``strict`` and ``unordered`` require exact counts:
    ``["search"]`` with ``unordered`` means exactly one call, to search.

    Not applicable when the case has no (or an empty) ``expected_trajectory``, or when the
    agent never answered.
    """
    expected = case.expected_trajectory
    if not expected:
        return _NO_TRAJECTORY
    na = unanswered(trial)
    if na is not None:
        return na
    if case.match_mode is not None:
        return _trajectory_in_mode(expected, [c.name for c in trial.tool_calls], case.match_mode)
    matched_at: list[int] = []
    pos = 0
    calls = trial.tool_calls
    for step in expected:
        while pos < len(calls) and calls[pos].name != step:
            pos += 1
        if pos == len(calls):
            break
        matched_at.append(pos)
        pos += 1
    k, n = len(matched_at), len(expected)
    path = " → ".join(expected)
    if k == n:
        extra = len(calls) - n
        return Score(1.0, f"called {path} in order ({n} of {n}), {extra} other calls allowed")
    done = " → ".join(f"{expected[j]} (#{matched_at[j] + 1})" for j in range(k)) or "nothing"
    after = f" after call #{matched_at[-1] + 1}" if matched_at else ""
    return Score(
        0.0,
        f"matched {k} of {n} steps of {path}: {done}; then {expected[k]} never called{after}",
    )


def _trajectory_in_mode(expected: list[str], made: list[str], mode: str) -> Score:
    found = match_in_mode([[e == a for a in made] for e in expected], len(made), mode)
    n, m, k, den, pairs = found.expected, found.made, found.matched, found.denominator, found.pairs
    value = found.value
    head = f"matched {k} of {n} steps, {m} calls made ({mode})"
    if value >= 1.0:
        return Score(1.0, head)
    if mode == "strict":
        i = next(i for i in range(max(n, m)) if i >= n or i >= m or expected[i] != made[i])
        if i >= m:
            why = f"step {i + 1}: expected {expected[i]}, not called"
        elif i >= n:
            why = f"call #{i + 1} {made[i]} was not expected"
        else:
            why = f"step {i + 1}: expected {expected[i]}, got {made[i]}"
    else:
        used = {j for j in pairs if j is not None}
        missing = [expected[i] for i, j in enumerate(pairs) if j is None]
        extra = [f"#{j + 1} {made[j]}" for j in range(m) if j not in used]
        if missing and mode != "superset":
            why = "not matched: " + _listing(missing)
        else:
            why = "not expected: " + _listing(extra)
    return Score(0.0, f"{head}, partial {ratio(k, den)}: {why}")


@scorer("step_efficiency", threshold=GRADED_THRESHOLD)
def step_efficiency(case: Case, trial: Trial) -> Score:
    """Calls needed over calls made, capped at 1 (graded, threshold 0.5).

    Needed is ``max_tool_calls``, else the length of a non-empty ``expected_trajectory``,
    else the sum of the ``expected_tools`` counts. 6 calls for a 3-call task give
    ``min(1, 3/6) = 0.5``. With no call made: 1.0 when 0 were needed, otherwise not
    applicable (``tool_selection`` judges a missing call). Not applicable when the case
    gives no way to know what is needed. Judged even when the agent never answered.
    """
    if case.max_tool_calls is not None:
        needed, source = case.max_tool_calls, "max_tool_calls"
    elif case.expected_trajectory:
        needed, source = len(case.expected_trajectory), "expected_trajectory"
    elif case.expected_tools is not None:
        needed, source = sum(case.expected_tools.values()), "expected_tools"
    else:
        return _NO_NEED_KNOWN
    made = len(trial.tool_calls)
    if made == 0:
        if needed == 0:
            return Score(1.0, f"needed 0 ({source}), made 0", GRADED_THRESHOLD)
        return not_applicable(f"no calls made (needed {needed}); tool_selection judges that")
    value = min(1.0, needed / made)
    cap = " capped at 1" if needed > made else ""
    return Score(
        value,
        f"needed {needed} ({source}), made {made} -> {ratio(needed, made)}{cap}",
        GRADED_THRESHOLD,
    )


def _freeze(value: Any) -> Any:
    """A hashable form equal for canonically equal JSON values (key order ignored)."""
    if type(value) is str:  # the common case first
        return value
    if isinstance(value, dict):
        return ("{", tuple(sorted((str(k), _freeze(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("[", tuple(_freeze(v) for v in value))
    if isinstance(value, bool) or value is None:
        return ("b", value)  # keeps true apart from 1
    if isinstance(value, int | float | str):
        return value
    return ("?", repr(value))


def _canonical(call: ToolCall) -> tuple[str, Any]:
    args = call.arguments
    if isinstance(args, str):
        return call.name, ("raw", args)
    return call.name, _freeze(args)


def make_redundant_calls(suite_tools: ToolDefs | None = None) -> Scorer:
    """Build ``redundant_calls`` with ``suite_tools`` as a further source of definitions."""
    suite: ToolDefs = list(suite_tools or [])

    @scorer("redundant_calls", threshold=BINARY_THRESHOLD)
    def redundant_calls(case: Case, trial: Trial) -> Score:
        """0.0 when a call repeats an identical call that already succeeded, else 1.0 (binary).

        Identical means the same tool name and canonically equal arguments: object key
        order does not matter, ``1`` and ``1.0`` are the same number, ``true`` is not ``1``.
        Arguments that were not valid JSON compare as raw text. Succeeded means ``error``
        is None. Retrying a call that failed is fine. A tool marked ``"x-idempotent":
        false`` in any definition the trial, the case or the suite carries may be repeated
        (drawing two random numbers is two calls). Threshold 1.0. Not applicable when no
        calls were made; judged even when the agent never answered.
        """
        calls = trial.tool_calls
        if not calls:
            return _NO_CALLS
        first_success: dict[tuple[str, Any], int] = {}
        repeats = []
        # Only a call whose tool is called again can repeat or be repeated: skip the others.
        times = Counter(c.name for c in calls)  # list.count here was quadratic in calls
        free = _non_idempotent(trial.tools, case.tools, suite)
        for i, call in enumerate(calls):
            if times[call.name] < 2 or call.name in free:
                continue
            key = _canonical(call)
            earlier = first_success.get(key)
            if earlier is not None:
                repeats.append(
                    f"{call_ref(i, call.name)} repeats #{earlier + 1} after it succeeded"
                )
            elif call.error is None:
                first_success[key] = i
        if repeats:
            return Score(
                0.0, f"{len(repeats)} redundant of {len(calls)} calls: {_listing(repeats)}"
            )
        return Score(1.0, f"none of {len(calls)} calls repeats a call that already succeeded")

    return redundant_calls


def _non_idempotent(*sources: ToolDefs | None) -> frozenset[str]:
    return frozenset(
        d["name"] for defs in sources if defs for d in defs if d.get(IDEMPOTENT) is False
    )


redundant_calls = make_redundant_calls()
"""``redundant_calls`` without suite tool definitions (trial's or case's only)."""
