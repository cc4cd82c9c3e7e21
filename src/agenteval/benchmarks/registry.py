"""Benchmarks: named bundles of a dataset, a prompt template, scorers and a judge rubric.

A :class:`Benchmark` says everything needed to run one suite: which cases (a dataset
file), how a case is turned into the prompt (``prompt``, a template as in
:mod:`agenteval.cases.prompt`, or None to send the input as is), which deterministic scorers
decide it (names of built-in scorers plus its own scorer functions), which judge rubric
grades it (None: judge-free) and which tools it offers.

Benchmarks live in a :class:`Registry`. Nothing is registered at import time: the
built-in suites are added to a registry built on first call of :func:`default_registry`,
and users register their own with the :func:`benchmark` decorator (into a registry they
pass, or the default one) or declaratively with :func:`load_benchmark_file`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.errors import InputError
from agenteval.scoring.score import ScorerFn
from agenteval.scoring.spec import scorer_name


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One named suite.

    ``dataset`` is the cases file; ``prompt`` the prompt template text (None: the input is
    sent as is); ``builtin_scorers`` names built-in deterministic scorers to run
    (:data:`agenteval.scorers.BUILTIN_SCORER_NAMES`); ``scorers`` are the suite's own
    scorer functions; ``rubric`` is a built-in rubric name or a template file path (None:
    judge-free); ``tools`` are the tool definitions the suite offers (bare or OpenAI
    function format).
    """

    name: str
    description: str
    dataset: Path
    prompt: str | None = None
    builtin_scorers: tuple[str, ...] = ()
    scorers: tuple[ScorerFn, ...] = ()
    rubric: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    source: str = "builtin"

    @property
    def needs_judge(self) -> bool:
        """True when the suite is graded by an LLM judge (it has a rubric)."""
        return self.rubric is not None

    @property
    def scorer_names(self) -> list[str]:
        """Names of every deterministic scorer the suite runs, built-in ones first."""
        return [*self.builtin_scorers, *(scorer_name(f) for f in self.scorers)]

    def case_count(self) -> int:
        """Number of non-blank lines of a JSONL dataset, else the validated case count."""
        if self.dataset.suffix == ".jsonl":
            with self.dataset.open(encoding="utf-8") as f:
                return sum(1 for line in f if line.strip())
        # imported on first use, so that importing this module stays light
        from agenteval.dataset import scan_dataset

        return scan_dataset(self.dataset).cases


@dataclass(slots=True)
class Registry:
    """Benchmarks by name. Registering a name twice is an error."""

    _items: dict[str, Benchmark] = field(default_factory=dict)

    def add(self, bench: Benchmark) -> Benchmark:
        """Register ``bench``; InputError when its name is taken."""
        if bench.name in self._items:
            raise InputError(f"benchmark '{bench.name}' is registered twice", field="name")
        self._items[bench.name] = bench
        return bench

    def get(self, name: str) -> Benchmark:
        """The benchmark called ``name``; InputError listing the known names otherwise."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise InputError(
                f"unknown benchmark '{name}' (known: {known})", field="benchmark"
            ) from None

    def copy(self) -> Registry:
        """A new registry holding the same benchmarks (adding to it leaves this one alone)."""
        return Registry(dict(self._items))

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._items)

    def __iter__(self) -> Iterator[Benchmark]:
        return iter(list(self._items.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)
