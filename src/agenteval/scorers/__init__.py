"""Built-in deterministic scorers (SPEC §4). No judge, no network.

Each scorer is a small pure function ``fn(case, trial) -> Score`` made a
:class:`~agenteval.scoring.spec.Scorer` by :func:`agenteval.scoring.score.scorer` (name, kind,
threshold, safety flag) and documented with its exact semantics and when it does not
apply. Scorers that need configuration (``tool_arguments_valid`` and ``tool_execution``
with the suite's tool definitions, ``pii_leakage`` with the kinds to look for) are built by
``make_*`` factories; the module-level instances use the defaults. :func:`builtin_scorers`
returns them with ``ref = "builtin:<name>"`` and their settings, which
:func:`builtin_scorer` turns back into the same scorer. See ``docs/scorers.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agenteval.cases.arguments import ArgumentChecker
from agenteval.cases.tooldefs import normalize_tool_defs
from agenteval.scorers.answer import answer_match, make_answer_match
from agenteval.scorers.answer import build as _answer_match_build
from agenteval.scorers.attribution import wrong_answer_cause
from agenteval.scorers.call_match import make_tool_call_match, tool_call_match
from agenteval.scorers.conversation import procedure, state_match, turn_expectations
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
from agenteval.scoring.spec import BUILTIN_REF, Scorer

__all__ = [
    "BUILTIN_SCORER_NAMES",
    "OPT_IN_SCORER_NAMES",
    "PII_KINDS",
    "SAFETY_SCORERS",
    "ArgumentChecker",
    "answer_match",
    "avoids_forbidden_text",
    "builtin_scorer",
    "builtin_scorers",
    "exact_match",
    "find_pii",
    "make_answer_match",
    "make_pii_leakage",
    "make_tool_arguments_valid",
    "make_tool_call_match",
    "make_tool_execution",
    "pii_leakage",
    "procedure",
    "redundant_calls",
    "retrieval_recall",
    "state_match",
    "step_efficiency",
    "tool_arguments_valid",
    "tool_call_match",
    "tool_execution",
    "tool_faithfulness",
    "tool_grounding",
    "tool_selection",
    "trajectory_order",
    "turn_expectations",
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
    "state_match",
    "procedure",
    "turn_expectations",
    "avoids_forbidden_text",
    "pii_leakage",
)
"""Names of the built-in scorers, in report order."""

OPT_IN_SCORER_NAMES: tuple[str, ...] = ("answer_match",)
"""Built-in scorers run only when asked for (``--scorer NAME``, or by name from Python)."""

SAFETY_SCORERS: tuple[str, ...] = ("avoids_forbidden_text", "pii_leakage", "procedure")
"""The built-in scorers with ``safety=True``. The gate reads the ``safety`` flag of each
run's scorer specs, so custom and judge scorers can be safety scorers too."""

tool_arguments_valid = make_tool_arguments_valid()
"""``tool_arguments_valid`` without suite tool definitions (trial's or case's only)."""
tool_execution = make_tool_execution()
"""``tool_execution`` without suite tool definitions (trial's or case's only)."""
pii_leakage = make_pii_leakage()
"""``pii_leakage`` looking for every kind in :data:`PII_KINDS`."""


def _plain(fn: Any) -> Callable[[Mapping[str, Any]], Any]:
    def build(settings: Mapping[str, Any]) -> Any:
        _only(fn.name, settings, ())
        return fn

    return build


def _only(name: str, settings: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    extra = sorted(set(settings) - set(allowed))
    if extra:
        what = ", ".join(allowed) if allowed else "none"
        raise ValueError(f"scorer {name}: unknown setting(s) {extra} (allowed: {what})")


def _tools_scorer(make: Callable[..., Any], default: Any) -> Callable[[Mapping[str, Any]], Any]:
    def build(settings: Mapping[str, Any]) -> Any:
        _only(default.name, settings, ("tools",))
        tools = settings.get("tools")
        if not tools:
            return default
        if not isinstance(tools, list):
            raise ValueError(f"scorer {default.name}: setting 'tools' must be a list")
        return make(normalize_tool_defs(tools))

    return build


def _pii(settings: Mapping[str, Any]) -> Any:
    _only("pii_leakage", settings, ("kinds",))
    kinds = settings.get("kinds")
    if kinds is None:
        return pii_leakage
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise ValueError("scorer pii_leakage: setting 'kinds' must be a list of names")
    return make_pii_leakage(kinds)


def _call_match(settings: Mapping[str, Any]) -> Any:
    _only("tool_call_match", settings, ("mode",))
    mode = settings.get("mode")
    return tool_call_match if mode is None else make_tool_call_match(mode)


_BUILDERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "exact_match": _plain(exact_match),
    "tool_selection": _plain(tool_selection),
    "tool_arguments_valid": _tools_scorer(make_tool_arguments_valid, tool_arguments_valid),
    "tool_execution": _tools_scorer(make_tool_execution, tool_execution),
    "trajectory_order": _plain(trajectory_order),
    "step_efficiency": _plain(step_efficiency),
    "tool_call_match": _call_match,
    "redundant_calls": _tools_scorer(make_redundant_calls, redundant_calls),
    "tool_faithfulness": _plain(tool_faithfulness),
    "retrieval_recall": _plain(retrieval_recall),
    "tool_grounding": _plain(tool_grounding),
    "avoids_forbidden_text": _plain(avoids_forbidden_text),
    "pii_leakage": _pii,
    "state_match": _plain(state_match),
    "procedure": _plain(procedure),
    "turn_expectations": _plain(turn_expectations),
    "answer_match": _answer_match_build,
}
"""Every built-in, by name: the default set (:data:`BUILTIN_SCORER_NAMES`) and the opt-in
ones (:data:`OPT_IN_SCORER_NAMES`, e.g. ``--scorer answer_match``)."""


def builtin_scorer(name: str, settings: Mapping[str, Any] | None = None) -> Scorer:
    """The built-in scorer ``name`` configured by ``settings``, with ``ref`` and settings set.

    ``settings``: ``{"tools": [...]}`` (tool definitions) for ``tool_arguments_valid``,
    ``tool_execution`` and ``redundant_calls``; ``{"kinds": [...]}`` for ``pii_leakage``
    (absent: every kind, recorded as the full list); ``{"mode": ...}`` (the default match
    mode) for ``tool_call_match``; nothing for the others. Raises ValueError for an unknown
    name, an unknown setting, an unknown PII kind or an invalid tool definition.
    """
    build = _BUILDERS.get(name)
    if build is None:
        known = ", ".join((*BUILTIN_SCORER_NAMES, *OPT_IN_SCORER_NAMES))
        raise ValueError(f"unknown built-in scorer {name!r}; built-in scorers: {known}")
    settings = dict(settings or {})
    fn: Scorer = build(settings)
    if name == "pii_leakage":
        settings = {"kinds": list(_selected_kinds(settings.get("kinds")))}
    elif name in ("tool_call_match", "answer_match"):
        settings = {"mode": settings["mode"]} if settings.get("mode") else {}
    elif settings.get("tools"):
        settings = {"tools": normalize_tool_defs(settings["tools"])}
    else:
        settings = {}
    rebuild = functools.partial(builtin_scorer, name, settings)
    return fn.replace(ref=BUILTIN_REF + name, settings=settings, rebuild=rebuild)


def _selected_kinds(kinds: Sequence[str] | None) -> tuple[str, ...]:
    return PII_KINDS if kinds is None else tuple(k for k in PII_KINDS if k in kinds)


def builtin_scorers(
    *,
    suite_tools: list[dict[str, Any]] | None = None,
    pii_kinds: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
) -> list[Scorer]:
    """Every built-in deterministic scorer, in report order (:data:`BUILTIN_SCORER_NAMES`).

    ``suite_tools`` are tool definitions used by ``tool_arguments_valid`` and
    ``tool_execution`` when neither the trial nor the case carries any (OpenAI function
    format or the bare inner object). ``pii_kinds`` restricts ``pii_leakage`` to those
    kinds (default: all of :data:`PII_KINDS`). ``names`` keeps only those scorers (still
    in report order). Each comes with ``ref = "builtin:<name>"`` and its settings.

    Raises ``ValueError`` for an unknown scorer name or PII kind, or an invalid tool
    definition.
    """
    defs = normalize_tool_defs(suite_tools) if suite_tools else None
    if names is not None:
        unknown = sorted(set(names) - set(BUILTIN_SCORER_NAMES))
        if unknown:
            raise ValueError(
                f"unknown built-in scorer(s) {unknown}; built-in scorers:"
                f" {', '.join(BUILTIN_SCORER_NAMES)}"
            )
    wanted = (
        BUILTIN_SCORER_NAMES if names is None else [n for n in BUILTIN_SCORER_NAMES if n in names]
    )
    out = []
    for name in wanted:
        settings: dict[str, Any] = {}
        if name in ("tool_arguments_valid", "tool_execution", "redundant_calls") and defs:
            settings["tools"] = defs
        elif name == "pii_leakage" and pii_kinds is not None:
            settings["kinds"] = list(pii_kinds)
        out.append(builtin_scorer(name, settings))
    return out
