"""The suites a run may name, and the scorers each one runs (``agenteval run --benchmark``
builds on these at the command line)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agenteval.benchmarks.builtin import default_registry
from agenteval.benchmarks.declarative import load_benchmark_file
from agenteval.benchmarks.registry import Benchmark, Registry
from agenteval.errors import InputError
from agenteval.scorers import BUILTIN_SCORER_NAMES, builtin_scorers, make_pii_leakage
from agenteval.scoring.score import ScorerFn


def registry_with(files: Sequence[str | Path] = ()) -> Registry:
    """The default registry, plus the benchmarks declared in each of ``files`` (YAML)."""
    if not files:
        return default_registry()
    reg = default_registry().copy()
    for f in files:
        load_benchmark_file(f, reg)
    return reg


def benchmark_scorers(bench: Benchmark, pii_kinds: list[str] | None = None) -> list[ScorerFn]:
    """The suite's scorers: its built-in ones (configured with its tools), then its own.

    InputError for a scorer name the suite gives that is not built in, and (field
    ``pii_kinds``) for an unknown PII kind."""
    unknown = set(bench.builtin_scorers) - set(BUILTIN_SCORER_NAMES)
    if unknown:
        raise InputError(f"benchmark '{bench.name}' names unknown scorer(s) {sorted(unknown)}")
    try:
        if pii_kinds is not None:
            make_pii_leakage(pii_kinds)  # checked even when the suite does not run it
        fns: list[ScorerFn] = list(
            builtin_scorers(
                suite_tools=list(bench.tools) or None,
                pii_kinds=pii_kinds,
                names=bench.builtin_scorers,
            )
        )
    except ValueError as e:
        raise InputError(str(e), field="pii_kinds") from None
    return fns + list(bench.scorers)
