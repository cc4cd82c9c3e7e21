"""Latency distributions: any non-negative floats, subnormal ones included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agenteval.summary.distributions import HISTOGRAM_BINS, distribution


def test_a_subnormal_maximum_puts_everything_in_the_first_bin() -> None:
    d = distribution([0.0, 5e-324, 5e-324])
    assert d.n == 3 and d.max == 5e-324
    assert d.histogram[0].count == 3 and len(d.histogram) == HISTOGRAM_BINS


@given(st.lists(st.floats(min_value=0.0, max_value=1e9), min_size=1, max_size=50))
def test_every_value_is_counted_once(values: list[float]) -> None:
    d = distribution(list(values))
    assert d.n == len(values) and sum(b.count for b in d.histogram) == len(values)
