"""The release decision: compare a candidate run with a baseline (SPEC §8).

- :mod:`agenteval.gate.model`: what the gate decided (``GateResult``, ``gate --json``);
- :mod:`agenteval.gate.checks`: the per-scorer, failure, coverage and safety checks;
- :mod:`agenteval.gate.paired`: runs that share cases, compared case by case;
- :mod:`agenteval.gate.unpaired`: two independent samples (e.g. two weeks of traffic);
- :mod:`agenteval.gate.two_sample`: the unpaired tests and their power.

``from agenteval.gate import compare_runs, decide`` is the documented entry point; the names
load on first use, so importing a submodule does not import the whole gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval._util.lazy import lazy_getattr

if TYPE_CHECKING:
    from agenteval.gate.model import (
        CoverageComparison,
        FailureComparison,
        GateResult,
        SafetyRegression,
        ScorerComparison,
    )
    from agenteval.gate.paired import (
        LEGACY_SAFETY_SCORERS,
        compare_runs,
        decide,
        safety_scorer_names,
    )

_LAZY = {
    "LEGACY_SAFETY_SCORERS": "agenteval.gate.paired",
    "CoverageComparison": "agenteval.gate.paired",
    "FailureComparison": "agenteval.gate.paired",
    "GateResult": "agenteval.gate.paired",
    "SafetyRegression": "agenteval.gate.paired",
    "ScorerComparison": "agenteval.gate.paired",
    "compare_runs": "agenteval.gate.paired",
    "decide": "agenteval.gate.paired",
    "safety_scorer_names": "agenteval.gate.paired",
}

__all__ = [
    "LEGACY_SAFETY_SCORERS",
    "CoverageComparison",
    "FailureComparison",
    "GateResult",
    "SafetyRegression",
    "ScorerComparison",
    "compare_runs",
    "decide",
    "safety_scorer_names",
]

__getattr__ = lazy_getattr(globals(), _LAZY)
