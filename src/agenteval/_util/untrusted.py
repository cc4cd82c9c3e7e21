"""Untrusted text (agent answers, tool results, error messages, case ids) made safe to show.

One definition of what is unsafe, used by every output:

- **escape sequences**: ESC (U+001B) sequences (CSI ``ESC [ … final``, OSC ``ESC ] … BEL``
  or ``ESC \\``, two-character ``ESC x``) and their 8-bit forms (CSI U+009B, OSC U+009D,
  DCS U+0090 … ST U+009C);
- **control characters**: C0 (U+0000–U+001F) except the ``keep`` ones, DEL (U+007F), C1
  (U+0080–U+009F);
- **bidi overrides and isolates**: U+202A–U+202E, U+2066–U+2069 (they reorder what is shown);
- **noncharacters** U+FFFE and U+FFFF (not allowed in XML);
- **lone surrogates** (U+D800–U+DFFF on their own: not encodable as UTF-8; a file written
  with one fails).

:func:`strip_unsafe` removes all of them (whole escape sequences at once), for the
terminal and JUnit XML; :func:`show_unsafe` replaces each unsafe character by a visible
stand-in (C0 by its Control Pictures symbol, e.g. ESC by ``␛``, the others by
``<U+XXXX>``, lone surrogates by U+FFFD), for the HTML report, where the reader should see
that something was there. :func:`replace_surrogates` only replaces lone surrogates by
U+FFFD, for data written as it is (``trials.jsonl``).
"""

from __future__ import annotations

import re

_SEQUENCE = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\][^\x07\x1b\x9c]{0,512}(?:\x07|\x1b\\|\x9c)?"  # OSC (a window title...)
    r"|[PX^_][^\x1b\x9c]{0,512}(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC
    r"|[ -~]?)"  # two-character sequences (and a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]{0,512}(?:\x07|\x9c)?"  # 8-bit OSC, DCS...
)
_UNSAFE_RANGES = "\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff\ud800-\udfff"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _unsafe(keep: str) -> re.Pattern[str]:
    c0 = "".join(re.escape(chr(c)) for c in range(0x20) if chr(c) not in keep)
    return re.compile(f"[{c0}{_UNSAFE_RANGES}]")


_UNSAFE = {keep: _unsafe(keep) for keep in ("", "\n", "\t\n", "\t\n\r")}


def _pattern(keep: str) -> re.Pattern[str]:
    found = _UNSAFE.get(keep)
    return found if found is not None else _unsafe(keep)


def strip_unsafe(text: str, keep: str = "\t\n") -> str:
    """``text`` without escape sequences or unsafe characters (module docstring); the
    characters in ``keep`` (default tab and newline) stay."""
    pattern = _pattern(keep)
    if pattern.search(text) is None:  # the common case: nothing to do, one fast scan
        return text
    return pattern.sub("", _SEQUENCE.sub("", text))


def _stand_in(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c < 0x20:
        return chr(0x2400 + c)
    if c == 0x7F:
        return "\u2421"
    if 0xD800 <= c <= 0xDFFF:
        return "\ufffd"
    return f"<U+{c:04X}>"


def show_unsafe(text: str, keep: str = "\t\n\r") -> str:
    """``text`` with every unsafe character replaced by a visible stand-in (module
    docstring); the characters in ``keep`` stay."""
    return _pattern(keep).sub(_stand_in, text)


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (so it can be written as UTF-8)."""
    return _SURROGATE.sub("\ufffd", text)


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD; ASCII text is returned as is
    (the common case, at the cost of one check)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


MAX_DEPTH = 100
"""How deep :func:`clean_value` follows lists and objects."""


class TooDeep(ValueError):
    """A value nested deeper than :data:`MAX_DEPTH`."""


def clean_value(value: object, depth: int = 0) -> object:
    """``value`` (parsed JSON) with :func:`clean_text` applied to every string, keys
    included; :class:`TooDeep` past :data:`MAX_DEPTH` levels (a trace's attribute values
    are read by recursive code further on)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list | dict):
        if depth >= MAX_DEPTH:
            raise TooDeep(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, list):
            return [clean_value(v, depth + 1) for v in value]
        return {clean_text(str(k)): clean_value(v, depth + 1) for k, v in value.items()}
    return value
