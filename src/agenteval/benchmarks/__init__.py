"""Built-in benchmark suites and the way to register your own (SPEC §9).

A benchmark bundles a dataset shipped with the package, a prompt template, the scorers
(and judge rubric) that decide it and the tools it offers. ``agenteval benchmarks`` lists
them; ``agenteval run --benchmark NAME`` runs them. See ``docs/benchmarks.md``.

Nothing is registered at import time: :func:`default_registry` builds the registry of
built-in suites on first use; :func:`benchmark` and :func:`load_benchmark_file` add yours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval._util.lazy import lazy_getattr

if TYPE_CHECKING:
    from agenteval.benchmarks._suites import benchmark_scorers, registry_with
    from agenteval.benchmarks.builtin import benchmark, default_registry
    from agenteval.benchmarks.declarative import SUITE_SCORERS, load_benchmark_file
    from agenteval.benchmarks.registry import Benchmark, Registry

# Imported on first use, so that `agenteval run` without --benchmark does not pay for them.
_LAZY = {
    "benchmark_scorers": "agenteval.benchmarks._suites",
    "registry_with": "agenteval.benchmarks._suites",
    "SUITE_SCORERS": "agenteval.benchmarks.declarative",
    "load_benchmark_file": "agenteval.benchmarks.declarative",
    "Benchmark": "agenteval.benchmarks.registry",
    "Registry": "agenteval.benchmarks.registry",
    "benchmark": "agenteval.benchmarks.builtin",
    "default_registry": "agenteval.benchmarks.builtin",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "SUITE_SCORERS",
    "Benchmark",
    "Registry",
    "benchmark",
    "benchmark_scorers",
    "default_registry",
    "load_benchmark_file",
    "registry_with",
]
