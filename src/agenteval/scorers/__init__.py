"""Built-in deterministic scorers (SPEC §4). No judge, no network.

Each scorer is a small pure function ``fn(case, trial) -> Score`` marked with
:func:`agenteval.score.scorer` (name and pass threshold) and documented with its exact
semantics and when it does not apply.
"""

from __future__ import annotations

from agenteval.score import ScorerFn


def builtin_scorers() -> list[ScorerFn]:
    """Every built-in deterministic scorer, in report order."""
    return []
