"""Which scorers a run uses: built from a typed config, or rebuilt from a run's specs.

:func:`build_scorers` turns a :class:`ScorerConfig` (built-ins on/off, suite tool
definitions, PII kinds, custom scorer import paths, Python scorer objects) into a
:class:`~agenteval.scoring.apply.Scorers` set whose ``specs`` are what ``run.json`` records.
:func:`rebuild_scorers` does the reverse for ``agenteval rescore``: it reads the specs a run
recorded and builds the same scorers again, with the overrides of :class:`ScorerOverrides`.
The command line only converts its options to these types (``agenteval.cli._common``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval._util.imports import load_callable
from agenteval.errors import FieldName, InputError, NamedText
from agenteval.scorers import OPT_IN_SCORER_NAMES, builtin_scorer, builtin_scorers
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import ScorerFn
from agenteval.scoring.spec import Scorer, ScorerSpec, as_scorer


@dataclass(frozen=True, slots=True)
class ScorerConfig:
    """The scorers of a new run.

    ``builtin``: run the built-in deterministic scorers (``builtin_names`` keeps only those,
    None: all twelve). ``suite_tools``: tool definitions for ``tool_arguments_valid`` and
    ``tool_execution``. ``pii_kinds``: the kinds ``pii_leakage`` looks for (None: all).
    ``custom``: ``module:fn`` import paths of custom scorers (recorded as their ``ref``).
    ``extra``: scorer objects given in Python (recorded by import path when it resolves,
    else with ``ref`` None).
    """

    builtin: bool = True
    builtin_names: Sequence[str] | None = None
    suite_tools: list[dict[str, Any]] | None = None
    pii_kinds: Sequence[str] | None = None
    custom: Sequence[str] = ()
    extra: Sequence[ScorerFn] = ()


def build_scorers(config: ScorerConfig, *, option: str = "scorer") -> Scorers:
    """The scorer set for ``config``: built-ins first (report order), then ``custom``,
    then ``extra``. InputError for an unknown PII kind, a bad tool definition, a custom
    scorer that cannot be imported, or two scorers with the same name."""
    fns: list[ScorerFn] = []
    if config.builtin:
        try:
            fns.extend(
                builtin_scorers(
                    suite_tools=config.suite_tools,
                    pii_kinds=config.pii_kinds,
                    names=config.builtin_names,
                )
            )
        except ValueError as e:
            pii = config.pii_kinds is not None and "kind" in str(e)
            raise InputError(str(e), field="pii_kinds" if pii else None) from None
    for target in config.custom:
        fns.append(load_scorer(target, option))
    fns.extend(config.extra)
    return Scorers(fns)


def load_scorer(target: str, option: str | None = "scorer") -> Scorer:
    """The scorer at import path ``module:fn``, with ``ref`` set to that path; a bare
    name (no ``:``) of an opt-in built-in (``answer_match``) is that built-in."""
    if ":" not in target and target in OPT_IN_SCORER_NAMES:
        return builtin_scorer(target)
    fn = as_scorer(load_callable(target, what="scorer", option=option))
    return fn.replace(ref=target)


@dataclass(frozen=True, slots=True)
class ScorerOverrides:
    """What ``rescore`` changes in the scorers a run recorded (every field: no change).

    ``no_builtin``: do not recompute the built-in scorers (their stored scores are kept).
    ``suite_tools``: new tool definitions for ``tool_arguments_valid``/``tool_execution``.
    ``pii_kinds``: new kinds for ``pii_leakage``. ``custom``: ``module:fn`` scorers added,
    each replacing the recorded scorer of the same name. ``trust_refs``: import the
    ``module:fn`` refs that run.json names (False: they are kept, not recomputed, because
    importing runs the code a run file names, and a run may come from someone else).
    """

    no_builtin: bool = False
    suite_tools: list[dict[str, Any]] | None = None
    pii_kinds: Sequence[str] | None = None
    custom: Sequence[str] = ()
    trust_refs: bool = False


@dataclass(slots=True)
class Rebuilt:
    """The result of :func:`rebuild_scorers`.

    ``scorers`` are applied again. ``kept`` are recorded specs that are not recomputed
    (judge rubrics, scorers without a ``ref``): their stored scores are carried over and
    their specs stay in the new run. ``notes`` are one line each, for the user.
    """

    scorers: Scorers
    kept: list[ScorerSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One line each (a :class:`~agenteval.errors.NamedText` naming the fields
    ``scorer``, ``trust_run``: the CLI shows their flags)."""

    @property
    def specs(self) -> list[ScorerSpec]:
        """Every spec of the new run: the rebuilt scorers', then the kept ones."""
        return [*self.scorers.specs, *self.kept]


def rebuild_scorers(
    specs: Sequence[ScorerSpec], overrides: ScorerOverrides, *, where: str | None = None
) -> Rebuilt:
    """Build again the scorers a run recorded (see ``docs/formats.md``, *Rescoring*).

    In recorded order: a ``builtin:`` spec is rebuilt with its settings (``--tool-defs`` and
    ``--pii-kinds`` replace them; with ``no_builtin`` it is kept, not recomputed); a
    ``module:fn`` spec is imported again only with ``trust_refs`` (else it is kept with a
    note: run.json is data, and importing a module it names runs code, e.g. a ``.py`` file
    shipped beside a run someone sent), under the recorded name; a ``judge:`` spec is kept
    (rescore never calls a judge); a spec without ``ref`` is kept with a note that it
    cannot be rebuilt. A ``custom`` override replaces the spec of the same name or is added
    at the end. A run that records no scorer at all gets the
    built-in defaults (unless ``no_builtin``). InputError when a recorded scorer cannot be
    rebuilt from its ref (unknown built-in, bad settings, import failure), naming
    ``where`` (the run.json path) as the file.
    """
    custom = [load_scorer(t, "scorer") for t in overrides.custom]
    by_name = {c.name: c for c in custom}
    fns: list[ScorerFn] = []
    out = Rebuilt(Scorers([]))
    if not specs and not overrides.no_builtin:
        fns.extend(
            build_scorers(
                ScorerConfig(suite_tools=overrides.suite_tools, pii_kinds=overrides.pii_kinds)
            ).scorers
        )
    for spec in specs:
        replacement = by_name.pop(spec.name, None)
        if replacement is not None:
            fns.append(replacement)
        elif spec.is_builtin:
            if overrides.no_builtin:
                out.kept.append(spec)
            else:
                fns.append(_builtin(spec, overrides, where))
        elif spec.is_judge:
            out.kept.append(spec)
        elif spec.ref is None:
            out.kept.append(spec)
            out.notes.append(
                NamedText(
                    f"cannot rebuild scorer '{spec.name}': run.json records no import path"
                    " for it; its stored scores are kept (give ",
                    FieldName("scorer"),
                    " MODULE:FN to recompute it)",
                )
            )
        elif not overrides.trust_refs:
            out.kept.append(spec)
            out.notes.append(
                NamedText(
                    f"scorer '{spec.name}' not recomputed: run.json names its code ({spec.ref})"
                    " and rescore imports code named by a run only with ",
                    FieldName("trust_run"),
                    "; its stored scores are kept (or give ",
                    FieldName("scorer"),
                    f" {spec.ref})",
                )
            )
        else:
            fns.append(_recorded(spec, where))
    fns.extend(by_name.values())
    out.scorers = Scorers(fns)
    return out


def _builtin(spec: ScorerSpec, overrides: ScorerOverrides, where: str | None) -> ScorerFn:
    assert spec.ref is not None
    name = spec.ref.partition(":")[2]
    settings = dict(spec.settings)
    if overrides.suite_tools is not None and name in (
        "tool_arguments_valid",
        "tool_execution",
        "redundant_calls",
    ):
        settings["tools"] = overrides.suite_tools
    if overrides.pii_kinds is not None and name == "pii_leakage":
        settings["kinds"] = list(overrides.pii_kinds)
    try:
        return builtin_scorer(name, settings)
    except ValueError as e:
        raise InputError(
            f"scorer '{spec.name}' cannot be rebuilt ({e})", file=where, field="scorers"
        ) from None


def _recorded(spec: ScorerSpec, where: str | None) -> ScorerFn:
    assert spec.ref is not None
    try:
        fn = load_scorer(spec.ref, None)
    except InputError as e:
        raise InputError(
            (
                f"scorer '{spec.name}' cannot be rebuilt: {e.message}; make {spec.ref}"
                " importable or give ",
                FieldName("scorer"),
                " MODULE:FN",
            ),
            file=where,
            field="scorers",
        ) from None
    # its scores are stored under the recorded name: a function renamed since (or a spec
    # whose name is not the function's) must not leave them stale beside new ones
    return fn if fn.name == spec.name else fn.replace(name=spec.name)
