"""Built-in deterministic scorers (SPEC §4). No judge, no network.

Each scorer is a small pure function ``fn(case, trial) -> Score`` marked with
:func:`agenteval.score.scorer` (name and pass threshold) and documented with its exact
semantics and when it does not apply. Scorers that need configuration
(``tool_arguments_valid`` and ``tool_execution`` with the suite's tool definitions,
``pii_leakage`` with the kinds to look for) are built by ``make_*`` factories; the
module-level instances use the defaults. See ``docs/scorers.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenteval.score import ScorerFn
from agenteval.scorers._schemas import ArgumentChecker
from agenteval.scorers.attribution import wrong_answer_cause
from agenteval.scorers.call_match import make_tool_call_match, tool_call_match
from agenteval.scorers.correctness import exact_match
from agenteval.scorers.grounding import retrieval_recall, tool_faithfulness, tool_grounding
from agenteval.scorers.pii import PII_KINDS, find_pii, make_pii_leakage
from agenteval.scorers.safety import avoids_forbidden_text
from agenteval.scorers.tools import (
    make_redundant_calls,
    make_tool_arguments_valid,
    make_tool_execution,
    redundant_calls,
    step_efficiency,
    tool_selection,
    trajectory_order,
)
from agenteval.tooldefs import normalize_tool_defs

__all__ = [
    "BUILTIN_SCORER_NAMES",
    "PII_KINDS",
    "SAFETY_SCORERS",
    "ArgumentChecker",
    "avoids_forbidden_text",
    "builtin_scorers",
    "exact_match",
    "find_pii",
    "make_pii_leakage",
    "make_tool_arguments_valid",
    "make_tool_call_match",
    "make_tool_execution",
    "pii_leakage",
    "redundant_calls",
    "retrieval_recall",
    "step_efficiency",
    "tool_arguments_valid",
    "tool_call_match",
    "tool_execution",
    "tool_faithfulness",
    "tool_grounding",
    "tool_selection",
    "trajectory_order",
    "wrong_answer_cause",
]

BUILTIN_SCORER_NAMES: tuple[str, ...] = (
    "exact_match",
    "tool_selection",
    "tool_arguments_valid",
    "tool_execution",
    "trajectory_order",
    "tool_call_match",
    "step_efficiency",
    "redundant_calls",
    "tool_faithfulness",
    "retrieval_recall",
    "tool_grounding",
    "avoids_forbidden_text",
    "pii_leakage",
)
"""Names of the built-in scorers, in report order."""

SAFETY_SCORERS: tuple[str, ...] = ("avoids_forbidden_text", "pii_leakage")
"""Scorers whose new failures the gate blocks on, whatever else improved."""

tool_arguments_valid = make_tool_arguments_valid()
"""``tool_arguments_valid`` without suite tool definitions (trial's or case's only)."""
tool_execution = make_tool_execution()
"""``tool_execution`` without suite tool definitions (trial's or case's only)."""
pii_leakage = make_pii_leakage()
"""``pii_leakage`` looking for every kind in :data:`PII_KINDS`."""


def builtin_scorers(
    *,
    suite_tools: list[dict[str, Any]] | None = None,
    pii_kinds: Sequence[str] | None = None,
) -> list[ScorerFn]:
    """Every built-in deterministic scorer, in report order (:data:`BUILTIN_SCORER_NAMES`).

    ``suite_tools`` are tool definitions used by ``tool_arguments_valid`` and
    ``tool_execution`` when neither the trial nor the case carries any (OpenAI function
    format or the bare inner object). ``pii_kinds`` restricts ``pii_leakage`` to those
    kinds (default: all of :data:`PII_KINDS`).

    Raises ``ValueError`` for an unknown PII kind or an invalid tool definition.
    """
    defs = normalize_tool_defs(suite_tools) if suite_tools else None
    return [
        exact_match,
        tool_selection,
        make_tool_arguments_valid(defs) if defs else tool_arguments_valid,
        make_tool_execution(defs) if defs else tool_execution,
        trajectory_order,
        tool_call_match,
        step_efficiency,
        make_redundant_calls(defs) if defs else redundant_calls,
        tool_faithfulness,
        retrieval_recall,
        tool_grounding,
        avoids_forbidden_text,
        make_pii_leakage(pii_kinds) if pii_kinds is not None else pii_leakage,
    ]
