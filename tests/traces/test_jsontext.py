"""``jsontext.loads`` (msgspec, json where msgspec refuses) reads every text exactly as
``json.loads`` does: the same value with the same types, or the same exception."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.traces.jsontext import loads


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (NaN equals NaN, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def outcome(text: str) -> tuple[str, Any]:
    try:
        return "value", json.loads(text)
    except Exception as e:  # the exception's type and message are what a user sees
        return "error", (type(e), str(e))


def check(text: str) -> None:
    kind, want = outcome(text)
    try:
        got = loads(text)
    except Exception as e:
        assert kind == "error" and (type(e), str(e)) == want, text
        return
    assert kind == "value" and same(got, want), text


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # past 64 bits too: msgspec keeps them int, orjson would not
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()  # NaN and infinities are written as json writes them (msgspec refuses)
    | st.text(),  # lone surrogates included: json writes them as escapes
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(values, st.booleans(), st.sampled_from([None, 1]))
def test_any_json_value_reads_as_json_reads_it(
    value: Any, ascii_only: bool, indent: int | None
) -> None:
    check(json.dumps(value, ensure_ascii=ascii_only, indent=indent))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-truefalsnNaIiy \t\n\\u\ud800x', max_size=30))
def test_any_text_reads_or_fails_as_json_does(text: str) -> None:
    check(text)


def test_the_texts_where_the_parsers_differ() -> None:
    for text in (
        '{"a": 1, "b": 2, "a": 3}',  # the last value, at the first key's place
        "[18446744073709551616, -9223372036854775809]",  # past 64 bits: int
        "[" + "9" * 4300 + "]",  # the longest integer json reads
        "[" + "9" * 4301 + "]",  # too long: json's ValueError
        "[NaN, Infinity, -Infinity, 1e400]",
        '["\\ud800", "\\udc00x"]',  # lone surrogates
        "[" * 5000 + "]" * 5000,  # json's RecursionError
        "[1,]",
        '{"a": 1} x',
        " [1] ",
        "1",
        '"s"',
        "",
    ):
        check(text)
