"""The scorers' fast paths agree with the plain statements of what they compute."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval._util.text import as_text, normalize, parse_number, quote, squash
from agenteval.cases.arguments import checker_for
from agenteval.cases.case import Case
from agenteval.scorers import avoids_forbidden_text, exact_match, find_pii, tool_arguments_valid
from agenteval.scorers import pii as pii_mod
from agenteval.trials.trial import Trial

# The detectors' patterns as first written: each leads with its lookbehind.
_PLAIN = {
    "_DIGIT_RUN": r"(?<![\w-])(?=(?:[ -]?[0-9]){13})[0-9]+(?:[ -][0-9]+)*(?!\w)",
    "_SSN": r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])",
    "_NINO": r"(?<![\w-])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![\w-])",
    "_IPV4": r"(?<![\w.])(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    r"(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}(?!\w)(?!\.\d)",
    "_PHONE": r"(?<![\w+])(?:"
    r"\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}"
    r"|\(\d{3}\) ?\d{3}[-. ]\d{4}"
    r"|\d{3}([-. ])\d{3}\1\d{4}"
    r"|0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}"
    r"|0\d(?:([ .-])\d{2})(?:\2\d{2}){3}"
    r")(?!\w)(?![.-]\d)",
}
_PLAIN_RE = {name: re.compile(p, re.A) for name, p in _PLAIN.items()}

_PIECES = st.sampled_from(
    [
        *"0123456789 -.:+()@_%xAZé\n",
        "AB",
        "BG",
        "QQ",
        "000",
        "666",
        "9",
        "25",
        "255",
        "::",
        "+1 ",
        "(415) ",
        "@ex.com",
        "4111 1111 1111 1111",
        "123-45-6789",
        "AB 12 34 56 C",
        "10.0.0.1",
        "+44 20 7946 0958",
        "06 12 34 56 78",
        "a.b@c.de",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=14).map("".join)


@settings(max_examples=400)
@given(_TEXTS)
def test_patterns_match_like_their_plain_statements(text: str) -> None:
    for name, plain in _PLAIN_RE.items():
        fast = getattr(pii_mod, name)
        assert [m.span() for m in fast.finditer(text)] == [
            m.span() for m in plain.finditer(text)
        ], name


def _reference_find_pii(text: str) -> dict[str, int]:
    # find_pii without shapes or digit counts: every detector runs on the plain patterns.
    def cards(t: str) -> list[tuple[int, int]]:
        return pii_mod._cards(t) if _PLAIN_RE["_DIGIT_RUN"].search(t) else []

    def ids(t: str) -> list[tuple[int, int]]:
        return [m.span() for m in _PLAIN_RE["_SSN"].finditer(t)] + [
            m.span() for m in _PLAIN_RE["_NINO"].finditer(t)
        ]

    def emails(t: str) -> list[tuple[int, int]]:
        return [m.span() for m in pii_mod._EMAIL.finditer(t)]

    def ips(t: str) -> list[tuple[int, int]]:
        out = [m.span() for m in _PLAIN_RE["_IPV4"].finditer(t)]
        for m in pii_mod._IPV6_CANDIDATE.finditer(t):
            if len(pii_mod._HEX_GROUP.findall(m.group())) < 3:
                continue
            try:
                ipaddress.IPv6Address(m.group())
            except ValueError:
                continue
            out.append(m.span())
        return out

    def phones(t: str) -> list[tuple[int, int]]:
        out = []
        for m in _PLAIN_RE["_PHONE"].finditer(t):
            digits = sum(c.isdigit() for c in m.group())
            if m.group().startswith("+") and not 8 <= digits <= 15:
                continue
            out.append(m.span())
        return out

    found: dict[str, int] = {}
    for kind, detect in zip(pii_mod.PII_KINDS, (cards, ids, emails, ips, phones), strict=True):
        spans = detect(text)
        if spans:
            found[kind] = len(spans)
            chars = list(text)
            for a, b in spans:
                chars[a:b] = " " * (b - a)
            text = "".join(chars)
    return found


@settings(max_examples=400)
@given(_TEXTS)
def test_find_pii_skips_only_detectors_that_cannot_match(text: str) -> None:
    assert find_pii(text) == _reference_find_pii(text)


@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_as_text_is_json_dumps(value: Any) -> None:
    if isinstance(value, str):
        assert as_text(value) is value
    else:
        assert as_text(value) == json.dumps(value, ensure_ascii=False, default=str)


def test_as_text_of_a_cycle_raises_what_json_dumps_raises() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular reference detected"):
        as_text(cyclic)


_WORDS = st.sampled_from(["ignore", "IGNORE", "previous", "Prévious", " ", "  ", "\n", "x", "."])


@given(
    st.lists(st.lists(_WORDS, max_size=4).map("".join), min_size=1, max_size=4),
    st.lists(_WORDS, max_size=12).map("".join),
)
def test_forbidden_text_matches_its_definition(forbidden: list[str], answer: str) -> None:
    case = Case(id="c", input="q", must_not_contain=forbidden)
    score = avoids_forbidden_text(case, Trial(case_id="c", output=answer))
    kept = [f for f in dict.fromkeys(forbidden) if squash(f)]
    if not kept:
        assert score.value is None
        return
    hits = [f for f in kept if squash(f) in squash(answer)]
    assert score.value == (0.0 if hits else 1.0)
    if hits:
        assert all(quote(h) in score.reason for h in hits[:5])


@given(
    st.sampled_from(["19,753", "19753.0", "-3.5.", " 1e3 ", "Paris", "paris.", "Écho"]),
    st.sampled_from(["19,753", "19753", "-3.5", "1000", "PARIS", "Echo", "x"]),
)
def test_exact_match_matches_its_definition(expected: str, answer: str) -> None:
    score = exact_match(
        Case(id="c", input="q", expected=expected), Trial(case_id="c", output=answer)
    )
    want, got = parse_number(expected), parse_number(answer)
    if want is not None and got is not None:
        assert score.value == (1.0 if abs(want - got) <= 0.01 + 1e-9 else 0.0)
    else:
        assert score.value == (1.0 if normalize(expected) == normalize(answer) else 0.0)


def _tools(minimum: Any) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": minimum}}}
    return [{"name": "count", "parameters": schema}]


def test_equal_definition_lists_share_a_checker_and_different_ones_do_not() -> None:
    trial = Trial(case_id="c", output="ok", tool_calls=[{"name": "count", "arguments": {"n": 0}}])
    a, b, c = _tools(1), _tools(1), _tools(1.0)  # 1 and 1.0 are equal but read differently
    assert checker_for(trial, a, []) is checker_for(trial, b, [])
    assert checker_for(trial, a, []) is not checker_for(trial, c, [])
    int_case = Case(id="c", input="q", tools=a)
    float_case = Case(id="c", input="q", tools=c)
    assert "minimum of 1" in tool_arguments_valid(int_case, trial).reason
    assert "minimum of 1.0" in tool_arguments_valid(float_case, trial).reason
