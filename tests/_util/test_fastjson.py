"""``agenteval._util.fastjson`` reads and writes exactly what the slow way does."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import from_json

from agenteval._util import fastjson

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _same(a: object, b: object) -> bool:
    """Equal with the same types all the way down (1 is not 1.0, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    return a == b


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES, st.booleans())
def test_loads_gives_what_from_json_gives(value: object, ascii_only: bool) -> None:
    try:
        text = json.dumps(value, ensure_ascii=ascii_only)
    except ValueError:  # pragma: no cover - json.dumps writes every value here
        return
    for data in (text.encode("utf-8", "surrogatepass"), text):
        try:
            want = from_json(data)
        except ValueError:
            with pytest.raises(ValueError):
                fastjson.loads(data)
            continue
        assert _same(fastjson.loads(data), want)


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":1,"a":2}',  # the last key wins in both
        b"[123456789012345678901234567890]",  # orjson would read a float
        b"[18446744073709551616, -9223372036854775809]",
        b"[1e400, -1e400, NaN, Infinity]",
        b'["\\ud800", "\\udfff x"]',  # lone surrogates
        b"\xef\xbb\xbf[1]",
        b"[1] x",
        b'["a\x01"]',
        b"",
        b"[-0, -0.0, 0.1e1, 1E5]",
    ],
)
def test_loads_edge_cases_match_from_json(text: bytes) -> None:
    try:
        want = from_json(text)
    except ValueError:
        with pytest.raises(ValueError):
            fastjson.loads(text)
        return
    assert _same(fastjson.loads(text), want)


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_dumps_str_spells_strings_as_json_dumps(s: str) -> None:
    assert fastjson.dumps_str(s) == json.dumps(s, ensure_ascii=False)


@pytest.mark.parametrize("s", ["\ud800", "a\udfffb", "\x7f\u2028\u2029", "\x00\x1f\b\f", '"\\/'])
def test_dumps_str_edge_cases(s: str) -> None:
    assert fastjson.dumps_str(s) == json.dumps(s, ensure_ascii=False)
