"""Scorer objects and their specs: what a scorer is, and how ``run.json`` records it.

A :class:`Scorer` wraps a scoring function ``fn(case, trial)`` with everything a run needs
to know about it: its ``name`` (the key its scores are stored under), its ``kind``
(``pass/fail``: values are 0 or 1; ``graded``: any value in [0, 1]), its pass
``threshold``, whether it is a ``safety`` scorer (the gate blocks on any new failure of a
safety scorer), its ``settings`` (a JSON dict: anything else, NaN included, is a
ValueError when the Scorer is made) and its ``ref``: how to build it again.

``ref`` forms (see ``docs/formats.md``):

- ``builtin:<name>``: a built-in scorer of :mod:`agenteval.scorers`, configured by
  ``settings`` (``{"tools": [...]}`` for ``tool_arguments_valid``/``tool_execution``,
  ``{"kinds": [...]}`` for ``pii_leakage``);
- ``module.path:attr``: a custom scorer importable by that path;
- ``judge:<rubric>``: an LLM judge rubric (a built-in rubric name or a template path);
  ``settings`` hold the judge's settings without secrets;
- None: the scorer cannot be rebuilt (a function defined in ``__main__`` or inside
  another function); ``agenteval rescore`` then says so and keeps its stored scores.

:class:`ScorerSpec` is the recorded form: ``{name, kind, threshold, safety, ref,
settings}`` in ``run.json``'s ``scorers`` list.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field

from agenteval.scoring.score import BINARY_THRESHOLD

Kind = Literal["pass/fail", "graded"]
KINDS: tuple[Kind, ...] = ("pass/fail", "graded")

BUILTIN_REF = "builtin:"
JUDGE_REF = "judge:"


class ScorerSpec(BaseModel):
    """One scorer of a run as ``run.json`` records it (see the module docstring)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    kind: Kind = "pass/fail"
    threshold: float = Field(BINARY_THRESHOLD, ge=0.0, le=1.0)
    safety: bool = False
    ref: str | None = Field(None, description="How to rebuild it; None: it cannot be.")
    settings: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_builtin(self) -> bool:
        """True for a ``builtin:`` ref."""
        return self.ref is not None and self.ref.startswith(BUILTIN_REF)

    @property
    def is_judge(self) -> bool:
        """True for a ``judge:`` ref (an LLM judge rubric)."""
        return self.ref is not None and self.ref.startswith(JUDGE_REF)


def default_kind(threshold: float) -> Kind:
    """``pass/fail`` for a threshold of 1.0, else ``graded``."""
    return "pass/fail" if threshold >= BINARY_THRESHOLD else "graded"


class Scorer:
    """A scoring function with its name, kind, threshold, safety flag, settings and ref.

    Calling it calls the function: ``scorer(case, trial)``. The function's ``__name__``,
    ``__module__``, ``__qualname__`` and ``__doc__`` are kept, so a decorated function is
    still found by its import path. ``ref`` None means "the import path of the function,
    when it can be resolved" (see :func:`import_ref`).
    """

    fn: Callable[..., Any]
    name: str
    kind: Kind
    threshold: float
    safety: bool
    settings: dict[str, Any]
    ref: str | None
    must_not_regress: bool
    """The gate blocks on any case that newly fails it (``gate --no-new-failures``)."""
    rebuild: Callable[[], Scorer] | None
    """A picklable recipe that makes this scorer again (a built-in scorer carries one, so
    that this module never imports :mod:`agenteval.scorers`); None: rebuilt from ``ref``."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        threshold: float = BINARY_THRESHOLD,
        kind: Kind | None = None,
        safety: bool = False,
        settings: Mapping[str, Any] | None = None,
        ref: str | None = None,
        rebuild: Callable[[], Scorer] | None = None,
        must_not_regress: bool = False,
    ) -> None:
        if isinstance(fn, Scorer):
            fn = fn.fn
        threshold = float(threshold)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"scorer threshold must be within [0, 1], got {threshold!r}")
        kind = kind or default_kind(threshold)
        if kind not in KINDS:
            raise ValueError(f"scorer kind must be one of {', '.join(KINDS)}, got {kind!r}")
        try:
            json.dumps(dict(settings or {}), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(
                f"scorer {name or getattr(fn, '__name__', fn)!r}: settings must be JSON"
                f" (run.json records them): {e}"
            ) from None
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None) or repr(fn)
        self.threshold = threshold
        self.kind = kind
        self.safety = bool(safety)
        self.settings = dict(settings or {})
        self.ref = ref
        self.rebuild = rebuild
        self.must_not_regress = bool(must_not_regress)

    def __call__(self, case: Any, trial: Any) -> Any:
        return self.fn(case, trial)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (for worker processes) as a recipe: a built-in by name and settings, a
        function by its import path when it has one, else the function itself."""
        attrs = {
            "name": self.name,
            "threshold": self.threshold,
            "kind": self.kind,
            "safety": self.safety,
            "settings": self.settings,
            "ref": self.ref,
            "must_not_regress": self.must_not_regress,
        }
        if self.rebuild is not None:
            return (_rebuilt_scorer, (self.rebuild, attrs))
        found = self.ref if self.ref is not None and not self.ref.startswith(BUILTIN_REF) else None
        found = found if found is not None else import_ref(self)
        return (_unpickle_scorer, (found if found is not None else self.fn, attrs))

    def replace(self, **changes: Any) -> Scorer:
        """A copy with some of name, threshold, kind, safety, settings, ref changed."""
        args: dict[str, Any] = {
            "name": self.name,
            "threshold": self.threshold,
            "kind": self.kind,
            "safety": self.safety,
            "settings": self.settings,
            "ref": self.ref,
            "rebuild": self.rebuild,
            "must_not_regress": self.must_not_regress,
        }
        args.update(changes)
        return Scorer(self.fn, **args)

    @property
    def spec(self) -> ScorerSpec:
        """The spec ``run.json`` records for this scorer."""
        extra = {"must_not_regress": True} if self.must_not_regress else {}
        return ScorerSpec(
            name=self.name,
            kind=self.kind,
            threshold=self.threshold,
            safety=self.safety,
            ref=self.ref if self.ref is not None else import_ref(self),
            settings=self.settings,
            **extra,
        )

    def __repr__(self) -> str:
        return f"Scorer({self.name!r}, kind={self.kind!r}, threshold={self.threshold:g})"


@overload
def scorer(name: Callable[..., Any], /) -> Scorer: ...
@overload
def scorer(
    name: str | None = None,
    *,
    threshold: float = BINARY_THRESHOLD,
    kind: Kind | None = None,
    safety: bool = False,
    settings: Mapping[str, Any] | None = None,
    must_not_regress: bool = False,
) -> Callable[[Callable[..., Any]], Scorer]: ...
def scorer(
    name: str | Callable[..., Any] | None = None,
    *,
    threshold: float = BINARY_THRESHOLD,
    kind: Kind | None = None,
    safety: bool = False,
    settings: Mapping[str, Any] | None = None,
    must_not_regress: bool = False,
) -> Scorer | Callable[[Callable[..., Any]], Scorer]:
    """Make a function a :class:`Scorer`: ``@scorer("polite", threshold=0.5)``.

    ``name`` defaults to the function's name; ``kind`` to ``pass/fail`` for threshold 1.0,
    else ``graded``; ``safety=True`` makes the gate block on any new failure of it;
    ``must_not_regress=True`` makes it block on any case that newly fails it (recorded
    in ``run.json``, so it holds for every gate of the run).
    Nothing is registered globally: pass the scorer to ``evaluate(..., scorers=[fn])`` or
    ``--scorer module:fn``. ``@scorer`` without arguments works too.
    """
    if callable(name):
        return Scorer(name)

    def mark(fn: Callable[..., Any]) -> Scorer:
        return Scorer(
            fn,
            name=name,
            threshold=threshold,
            kind=kind,
            safety=safety,
            settings=settings,
            must_not_regress=must_not_regress,
        )

    return mark


def as_scorer(fn: Callable[..., Any]) -> Scorer:
    """``fn`` itself when it is a Scorer, else a pass/fail Scorer named after it."""
    if isinstance(fn, Scorer):
        return fn
    return Scorer(fn, name=scorer_name(fn), threshold=scorer_threshold(fn))


def scorer_name(fn: Callable[..., Any]) -> str:
    """The name a scorer's results are stored under."""
    if isinstance(fn, Scorer):
        return fn.name
    return str(getattr(fn, "__agenteval_name__", None) or getattr(fn, "__name__", repr(fn)))


def scorer_threshold(fn: Callable[..., Any]) -> float:
    """The pass threshold of a scorer (default 1.0)."""
    if isinstance(fn, Scorer):
        return fn.threshold
    return float(getattr(fn, "__agenteval_threshold__", BINARY_THRESHOLD))


def import_ref(obj: Any) -> str | None:
    """``module:qualname`` when importing that path gives back ``obj`` (or the function it
    wraps), else None: a function of ``__main__``, one defined inside another function, or
    one that its module does not expose under its own name."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    if module == "__main__" or "<" in qualname:
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    fn = obj.fn if isinstance(obj, Scorer) else obj
    target = found.fn if isinstance(found, Scorer) else found
    if found is None or (found is not obj and target is not fn):
        return None
    return f"{module}:{qualname}"


def _rebuilt_scorer(rebuild: Callable[[], Scorer], attrs: dict[str, Any]) -> Scorer:
    """A scorer again from its own recipe (a built-in's), with the pickled attributes."""
    return rebuild().replace(rebuild=rebuild, **attrs)


def _unpickle_scorer(what: Any, attrs: dict[str, Any]) -> Scorer:
    """A scorer again from :meth:`Scorer.__reduce__`'s recipe (in a worker process)."""
    if not isinstance(what, str):
        return Scorer(what, **attrs)
    # The user's module is imported only when a worker unpickles a custom scorer.
    from agenteval._util.imports import load_callable

    fn = load_callable(what, what="scorer", option=None)
    return Scorer(fn.fn if isinstance(fn, Scorer) else fn, **attrs)
