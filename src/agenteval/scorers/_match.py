"""The match-mode arithmetic shared by ``tool_call_match`` and ``trajectory_order``.

Both compare ``n`` expected items (calls, or tool names) with the ``m`` calls made, given
which expected item may pair with which made call (``adj[i][j]``). ``k`` is the size of a
*maximum* one-to-one matching — over order-preserving pairs (a longest common
subsequence, :func:`ordered_matching`) for ``strict`` and ``in_order``, over any pairs
(:func:`max_matching`) for ``unordered``, ``subset`` and ``superset``. The value is
``k/(n+m-k)`` for ``strict`` and ``unordered``, ``k/n`` for ``subset`` and ``in_order``,
``k/m`` for ``superset``; a zero denominator gives 1.0. A mode's condition holds exactly
when the value is 1.0 (each scorer's module says what it does with the value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MATCH_MODES = ("strict", "unordered", "subset", "superset", "in_order")
"""The match modes, as a case's ``match_mode`` names them."""

ORDERED_MODES = ("strict", "in_order")
"""The modes that match in order (a longest common subsequence)."""


def max_matching(adj: Sequence[Sequence[bool]]) -> list[int | None]:
    """A maximum bipartite matching: ``out[i]`` is the column matched to row ``i`` or None.

    ``adj[i][j]`` says whether row ``i`` may pair with column ``j``. Kuhn's augmenting
    paths, ``O(rows · edges)``: exact (no greedy choice survives an augmenting path), and
    fast for the tens of calls a case has.
    """
    rows = len(adj)
    cols = len(adj[0]) if rows else 0
    owner: list[int | None] = [None] * cols

    def augment(i: int, seen: list[bool]) -> bool:
        for j in range(cols):
            if adj[i][j] and not seen[j]:
                seen[j] = True
                o = owner[j]
                if o is None or augment(o, seen):
                    owner[j] = i
                    return True
        return False

    for i in range(rows):
        augment(i, [False] * cols)
    out: list[int | None] = [None] * rows
    for j, row in enumerate(owner):
        if row is not None:
            out[row] = j
    return out


def ordered_matching(adj: Sequence[Sequence[bool]]) -> list[int | None]:
    """A maximum order-preserving matching (longest common subsequence), as ``max_matching``.

    Pairs ``(i, j)`` and ``(i2, j2)`` with ``i < i2`` always have ``j < j2``. Ties go to
    the earliest columns.
    """
    rows = len(adj)
    cols = len(adj[0]) if rows else 0
    # best[i][j]: LCS length of rows i.. and columns j..
    best = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            if adj[i][j]:
                best[i][j] = 1 + best[i + 1][j + 1]
            else:
                best[i][j] = max(best[i + 1][j], best[i][j + 1])
    out: list[int | None] = [None] * rows
    i = j = 0
    while i < rows and j < cols:
        if adj[i][j] and best[i][j] == 1 + best[i + 1][j + 1]:
            out[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


@dataclass(frozen=True, slots=True)
class ModeMatch:
    """``n`` expected items matched with ``m`` made calls in one mode (module docstring)."""

    mode: str
    expected: int
    """``n``."""
    made: int
    """``m``."""
    pairs: tuple[int | None, ...]
    """Per expected item, the index of the made call it is matched to, or None."""

    @property
    def matched(self) -> int:
        """``k``: the expected items matched."""
        return sum(p is not None for p in self.pairs)

    @property
    def denominator(self) -> int:
        """``n`` (subset, in_order), ``m`` (superset) or ``n + m - k`` (strict, unordered)."""
        n, m = self.expected, self.made
        return {"subset": n, "in_order": n, "superset": m}.get(self.mode, n + m - self.matched)

    @property
    def value(self) -> float:
        """``k`` over :attr:`denominator`; 1.0 when that is 0."""
        den = self.denominator
        return 1.0 if den == 0 else self.matched / den


def match_in_mode(adj: Sequence[Sequence[bool]], made: int, mode: str) -> ModeMatch:
    """Match the rows of ``adj`` (expected items) with its ``made`` columns in ``mode``.

    ValueError for a mode not in :data:`MATCH_MODES`."""
    if mode not in MATCH_MODES:
        raise ValueError(f"unknown match mode '{mode}' (known: {', '.join(MATCH_MODES)})")
    pairs = ordered_matching(adj) if mode in ORDERED_MODES else max_matching(adj)
    return ModeMatch(mode, len(adj), made, tuple(pairs))
