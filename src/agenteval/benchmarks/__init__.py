"""Built-in benchmark suites and the way to register your own (SPEC §9).

A benchmark bundles a dataset shipped with the package, a prompt template, the scorers
(and judge rubric) that decide it and the tools it offers. ``agenteval benchmarks`` lists
them; ``agenteval run --benchmark NAME`` runs them. See ``docs/benchmarks.md``.

Nothing is registered at import time: :func:`default_registry` builds the registry of
built-in suites on first use; :func:`benchmark` and :func:`load_benchmark_file` add yours.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agenteval.benchmarks._args import add_benchmark_args

if TYPE_CHECKING:
    from agenteval.benchmarks._run import benchmark_scorers, registry_from_args, run_benchmarks
    from agenteval.benchmarks.declarative import SUITE_SCORERS, load_benchmark_file
    from agenteval.benchmarks.registry import Benchmark, Registry, benchmark, default_registry

# Imported on first use, so that `agenteval run` without --benchmark does not pay for them.
_LAZY = {
    "benchmark_scorers": "_run",
    "registry_from_args": "_run",
    "run_benchmarks": "_run",
    "SUITE_SCORERS": "declarative",
    "load_benchmark_file": "declarative",
    "Benchmark": "registry",
    "Registry": "registry",
    "benchmark": "registry",
    "default_registry": "registry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenteval.benchmarks' has no attribute {name!r}")
    return getattr(import_module(f"agenteval.benchmarks.{module}"), name)


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
