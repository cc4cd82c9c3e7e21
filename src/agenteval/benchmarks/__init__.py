"""Built-in benchmark suites and the way to register your own (SPEC §9).

A benchmark bundles a dataset shipped with the package, a prompt template, the scorers
(and judge rubric) that decide it and the tools it offers. ``agenteval benchmarks`` lists
them; ``agenteval run --benchmark NAME`` runs them. See ``docs/benchmarks.md``.

Nothing is registered at import time: :func:`default_registry` builds the registry of
built-in suites on first use; :func:`benchmark` and :func:`load_benchmark_file` add yours.
"""

from __future__ import annotations

from agenteval.benchmarks._run import (
    add_benchmark_args,
    benchmark_scorers,
    registry_from_args,
    run_benchmarks,
)
from agenteval.benchmarks.declarative import SUITE_SCORERS, load_benchmark_file
from agenteval.benchmarks.registry import Benchmark, Registry, benchmark, default_registry

__all__ = [
    "SUITE_SCORERS",
    "Benchmark",
    "Registry",
    "add_benchmark_args",
    "benchmark",
    "benchmark_scorers",
    "default_registry",
    "load_benchmark_file",
    "registry_from_args",
    "run_benchmarks",
]
