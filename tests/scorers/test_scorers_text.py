"""Normalisation and number reading shared by the scorers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval._util.text import (
    NUMBER,
    REFERENCE_NUMBER,
    find_numbers,
    normalize,
    parse_number,
    quote,
    same_number,
    squash,
)


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("  Paris. ", "paris"),
        ("Café", "cafe"),
        ("ÉCOLE", "ecole"),
        ("Straße", "strasse"),
        ("a..", "a."),
        ("New  York", "new  york"),
        ("x .", "x"),
        ("", ""),
    ],
)
def test_normalize(raw: str, norm: str) -> None:
    assert normalize(raw) == norm


def test_squash_collapses_white_space_but_keeps_periods() -> None:
    assert squash("  Ignore\n\tPREVIOUS   instructions. ") == "ignore previous instructions."


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("19,753", 19753.0),
        ("19753.0", 19753.0),
        (" 19753 ", 19753.0),
        ("-3.5", -3.5),
        ("+2", 2.0),
        ("1e3", 1000.0),
        ("2.5E-4", 0.00025),
        ("1,234,567.89", 1234567.89),
        ("42.", 42.0),
        ("\u22127", -7.0),
    ],
)
def test_parse_number_reads_whole_numbers(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize(
    "text", ["$5", "60%", "about 7", "1,2345", "12,34", "seven", "", "1 000", "0x1F", "inf", "nan"]
)
def test_parse_number_refuses_text(text: str) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Revenue was $19,753 in 2023.", [19753.0, 2023.0]),
        ("up 45% to -3.5", [45.0, -3.5]),
        ("2020-2021", [2020.0, 2021.0]),
        ("abc123 v2 x_9 9x", []),
        ("version 1.2.3", []),
        ("1,2,3", [1.0, 2.0, 3.0]),
        ('{"n": 19753.0, "m": 1e3}', [19753.0, 1000.0]),
        ("The answer is 3.5.", [3.5]),
        ("−7 degrees", [-7.0]),
    ],
)
def test_find_numbers(text: str, numbers: list[float]) -> None:
    assert find_numbers(text) == pytest.approx(numbers)


def test_same_number_is_inclusive_at_one_hundredth() -> None:
    assert same_number(1.0, 1.01)
    assert same_number(19753, 19753.0)
    assert not same_number(1.0, 1.0101)


def test_quote_escapes_and_cuts() -> None:
    assert quote('say "hi"\n') == '"say \\"hi\\"\\n"'
    assert quote("x" * 100, limit=10) == '"' + "x" * 9 + '…"'


@given(st.integers(-(10**12), 10**12))
def test_grouped_and_plain_integers_read_the_same(n: int) -> None:
    assert parse_number(f"{n:,}") == n
    assert parse_number(str(n)) == n
    assert find_numbers(f"total: {n:,} units") == [n]


@given(st.floats(-1e9, 1e9, allow_nan=False).map(lambda x: round(x, 4)))
def test_decimal_numbers_round_trip(x: float) -> None:
    text = f"{x:.4f}"
    got = parse_number(text)
    assert got is not None and same_number(got, x)


@settings(max_examples=500)
@given(st.text(alphabet="0123456789-+.,eE ax_%$\u2212", max_size=30))
def test_fast_number_pattern_matches_the_plain_statement(text: str) -> None:
    assert NUMBER.findall(text) == REFERENCE_NUMBER.findall(text)
