"""Which case ids a summary shows as a failure cause's examples.

Up to :data:`MAX_EXAMPLES` of them, the first in dataset order (given as ``case_order``,
asked for at the first failure), so the list does not depend on the order trials finished
in; case ids the dataset does not hold come after, in finish order. Without a case order,
the first ones to fail. The cause's message is its first example's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agenteval.summary.model import CauseCount

__all__ = ["MAX_EXAMPLES", "FailureExamples"]

MAX_EXAMPLES = 5


class FailureExamples:
    """Keeps each cause's examples (module docstring)."""

    __slots__ = ("_case_order", "_pos")

    def __init__(self, case_order: Callable[[], Iterable[str]] | None) -> None:
        self._case_order = case_order
        self._pos: dict[str, int] | None = None
        """The dataset position of each case id, built at the first failure."""

    def forget_order(self) -> None:
        """Free the positions (a streamed summary's last pass needs them no more)."""
        self._pos = None

    def add(self, cc: CauseCount, case_id: str, message: str) -> None:
        """Count ``case_id`` among the examples of ``cc``, whose message it may become."""
        if case_id in cc.examples:
            return
        if self._pos is None and self._case_order is not None:
            self._pos = {cid: i for i, cid in enumerate(self._case_order())}
        pos = self._pos
        if pos is None:
            if len(cc.examples) < MAX_EXAMPLES:
                cc.examples.append(case_id)
            return
        last = len(pos)
        key = pos.get(case_id, last)
        keys = [pos.get(c, last) for c in cc.examples]
        at = next((i for i, k in enumerate(keys) if k > key), len(keys))
        if at >= MAX_EXAMPLES:
            return
        cc.examples.insert(at, case_id)
        del cc.examples[MAX_EXAMPLES:]
        if at == 0:
            cc.message = message[:500]
