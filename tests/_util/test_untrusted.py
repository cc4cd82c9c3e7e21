"""agenteval._util.untrusted: nothing unsafe survives, and safe text is left alone."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agenteval._util.untrusted import replace_surrogates, show_unsafe, strip_unsafe

UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff\ud800-\udfff]"
)
hostile = st.text(
    alphabet=st.one_of(
        st.characters(),  # includes lone surrogates
        st.sampled_from(["\x1b", "\x9b", "\x9d", "\x9c", "\x07", "[", "]", "0", ";", "m"]),
    )
)


@given(hostile)
def test_nothing_unsafe_survives(text: str) -> None:
    for out in (strip_unsafe(text), show_unsafe(text).replace("\r", "")):  # HTML keeps CR
        assert not UNSAFE.search(out)
        out.encode("utf-8")  # strict: no lone surrogate left


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Co", "Cn"))))
def test_safe_text_is_unchanged(text: str) -> None:
    assert strip_unsafe(text) == text
    assert show_unsafe(text) == text


def test_sequences_go_whole_and_stand_ins_are_visible() -> None:
    assert strip_unsafe("a\x1b[2Jb\x9b31mc\x1b]0;title\x07d") == "abcd"
    assert show_unsafe("\x1b\x00\x9b\ufffe\ud800") == "\u241b\u2400<U+009B><U+FFFE>\ufffd"
    assert strip_unsafe("a\tb\nc") == "a\tb\nc"
    assert replace_surrogates("x\udfffy") == "x\ufffdy"
