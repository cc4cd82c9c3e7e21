"""Property tests of the call matching: optimal assignment, symmetry, permutation invariance."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.scorers.call_match import MATCH_MODES, match_calls, max_matching, ordered_matching
from agenteval.trials.trial import ToolCall

Matrix = list[list[bool]]


@st.composite
def matrices(draw: st.DrawFn, max_side: int = 6) -> Matrix:
    rows = draw(st.integers(0, max_side))
    cols = draw(st.integers(0, max_side))
    return [[draw(st.booleans()) for _ in range(cols)] for _ in range(rows)]


def _cols(adj: Matrix) -> int:
    return len(adj[0]) if adj else 0


def brute_max(adj: Matrix) -> int:
    """The largest one-to-one matching, by trying every injection of rows into columns."""
    rows, cols = len(adj), _cols(adj)
    best = 0
    targets = list(range(cols)) + [None] * rows  # None: row left unmatched
    for choice in itertools.permutations(targets, rows):
        used = [c for c in choice if c is not None]
        if len(used) != len(set(used)):
            continue
        if all(c is None or adj[i][c] for i, c in enumerate(choice)):
            best = max(best, len(used))
    return best


def brute_ordered(adj: Matrix) -> int:
    """The largest order-preserving matching (longest common subsequence), by recursion."""
    rows, cols = len(adj), _cols(adj)

    def go(i: int, j: int) -> int:
        if i == rows or j == cols:
            return 0
        best = max(go(i + 1, j), go(i, j + 1))
        if adj[i][j]:
            best = max(best, 1 + go(i + 1, j + 1))
        return best

    return go(0, 0)


def _valid(adj: Matrix, pairs: list[int | None], ordered: bool) -> bool:
    used = [j for j in pairs if j is not None]
    if len(used) != len(set(used)):
        return False
    if ordered and used != sorted(used):
        return False
    return all(j is None or adj[i][j] for i, j in enumerate(pairs))


def _transpose(adj: Matrix, cols: int) -> Matrix:
    return [[adj[i][j] for i in range(len(adj))] for j in range(cols)]


@settings(max_examples=300, deadline=None)
@given(matrices(max_side=5))
def test_max_matching_is_a_maximum_matching(adj: Matrix) -> None:
    pairs = max_matching(adj)
    assert _valid(adj, pairs, ordered=False)
    assert sum(p is not None for p in pairs) == brute_max(adj)


@settings(max_examples=300, deadline=None)
@given(matrices())
def test_ordered_matching_is_a_longest_common_subsequence(adj: Matrix) -> None:
    pairs = ordered_matching(adj)
    assert _valid(adj, pairs, ordered=True)
    assert sum(p is not None for p in pairs) == brute_ordered(adj)


@settings(max_examples=200, deadline=None)
@given(matrices())
def test_matched_count_is_symmetric(adj: Matrix) -> None:
    """Swapping the roles of expected and made calls matches as many pairs."""
    t = _transpose(adj, _cols(adj))
    count = lambda ps: sum(p is not None for p in ps)  # noqa: E731
    assert count(max_matching(adj)) == count(max_matching(t))
    assert count(ordered_matching(adj)) == count(ordered_matching(t))


# Calls over a tiny vocabulary so that matches, near misses and duplicates are common.
NAMES = st.sampled_from(["a", "b"])
CITY = st.sampled_from(["Oslo", "Rome"])


@st.composite
def scenario(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[ToolCall], list[int]]:
    spec = st.fixed_dictionaries(
        {
            "name": NAMES,
            "arguments": st.one_of(
                st.fixed_dictionaries({"city": CITY}),
                st.just({"city": {"$present": True}}),
                st.just({"city": {"$any_of": ["Oslo", "Rome"]}}),
            ),
        }
    )
    expected = draw(st.lists(spec, max_size=5))
    made = draw(
        st.lists(
            st.builds(lambda n, c: ToolCall(name=n, arguments={"city": c}), NAMES, CITY),
            max_size=5,
        )
    )
    perm = draw(st.permutations(range(len(made))))
    return expected, made, perm


@settings(max_examples=300, deadline=None)
@given(scenario())
def test_unordered_modes_ignore_the_order_of_calls(
    s: tuple[list[dict[str, Any]], list[ToolCall], list[int]],
) -> None:
    expected, made, perm = s
    specs = Case(id="c", input="q", expected_calls=expected).call_specs() or []
    shuffled = [made[i] for i in perm]
    for mode in ("unordered", "subset", "superset"):
        a = match_calls(specs, made, mode)
        b = match_calls(specs, shuffled, mode)
        assert (a.value, a.matched) == (b.value, b.matched)
        # and the order of the expected calls does not matter either
        c = match_calls(specs[::-1], made, mode)
        assert c.value == a.value


@settings(max_examples=300, deadline=None)
@given(scenario())
def test_mode_values_are_consistent(
    s: tuple[list[dict[str, Any]], list[ToolCall], list[int]],
) -> None:
    expected, made, _ = s
    specs = Case(id="c", input="q", expected_calls=expected).call_specs() or []
    r = {m: match_calls(specs, made, m) for m in MATCH_MODES}
    # an order-preserving matching is a matching: ordered modes never match more
    assert r["strict"].matched <= r["unordered"].matched
    assert r["in_order"].matched <= r["subset"].matched
    # strict passes only if unordered does; unordered passes exactly when subset and superset do
    assert r["strict"].value <= r["unordered"].value
    assert (r["unordered"].value == 1.0) == (
        r["subset"].value == 1.0 and r["superset"].value == 1.0
    )
    for m in MATCH_MODES:
        assert 0.0 <= r[m].value <= 1.0
