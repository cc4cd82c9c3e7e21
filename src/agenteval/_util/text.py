"""Text and number reading shared by the deterministic scorers.

**Normalisation** (:func:`normalize`): Unicode case folding, accents removed (NFKD, then
combining marks dropped), surrounding white space stripped, and one final period removed
(then white space stripped again); inner white space is kept as is. For containment
checks, :func:`squash` folds case and accents and collapses every run of white space to
one space, but keeps periods.

**Numbers** (:data:`NUMBER`) are written as an optional sign, ASCII digits — either
plain (``19753``) or grouped in threes by commas (``19,753``) — an optional decimal part
(``.5``) and an optional exponent (``1e3``, ``2.5E-4``). The Unicode minus sign counts as
``-``. A number inside text must stand alone: no ASCII letter, digit, underscore or period
right before it and no letter, digit or underscore right after it (``abc123``, ``v2``
and a version like ``1.2.3`` hold no number; ``$19,753`` and ``45%`` hold ``19753`` and
``45``). A sign counts only when nothing of that kind precedes it (``2020-2021`` is
``2020`` and ``2021``). Two numbers are equal when they differ by at most
:data:`TOLERANCE` (0.01).
"""

from __future__ import annotations

import functools
import json
import json.encoder
import re
import unicodedata
from collections.abc import Iterable
from json.encoder import encode_basestring as _encode_basestring
from typing import Any

from agenteval._util.identity import Identity

TOLERANCE = 0.01
"""Two numbers within this absolute distance (inclusive) are the same value."""

_EPS = 1e-9  # absorbs binary rounding so that 1.01 vs 1.00 counts as within 0.01

# ASCII classes on purpose: Unicode \d and \w make the scan several times slower.
_NUMBER_BODY = r"[-+]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_NUMBER_END = r"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?(?![A-Za-z0-9_])(?!\.[0-9])"
REFERENCE_NUMBER = re.compile(rf"(?<![A-Za-z0-9_.]){_NUMBER_BODY}(?![A-Za-z0-9_])(?!\.[0-9])")
"""The plain statement of :data:`NUMBER` (same matches; kept to test it against)."""
# The same language written to start with a character class, which lets the regex
# engine skip ahead to candidate characters: about twice as fast on long tool results.
NUMBER = re.compile(
    r"[-+0-9](?<![A-Za-z0-9_.].)"  # a sign or digit not glued to what precedes it
    r"(?:(?<=[0-9])(?:[0-9]{0,2}(?:,[0-9]{3})+|[0-9]*)"  # began with a digit
    r"|(?<=[-+])(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+))" + _NUMBER_END  # began with a sign
)
"""A number standing alone inside text (see the module docstring)."""
_WHOLE_NUMBER = re.compile(_NUMBER_BODY)
_SPACES = re.compile(r"\s+")
# The C encoder json.dumps(value, ensure_ascii=False, default=str) builds for each call,
# built once, without the record of objects being encoded that detects cycles (so it keeps
# no state between calls). It writes the same text; for anything it fails on (a cycle ends
# in RecursionError here), json.dumps itself runs, so errors are json.dumps's own.


def _c_encoder() -> Any:
    # A private CPython hook: when it is missing or its signature changes, json.dumps runs.
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    try:
        return make(None, str, _encode_basestring, None, ": ", ", ", False, False, True)
    except Exception:
        return None


_C_JSON: Any = _c_encoder()


def fold(text: str) -> str:
    """Casefold and strip accents (NFKD, combining marks dropped); nothing else."""
    if text.isascii():  # same result: ASCII only folds A-Z, and NFKD leaves it alone
        return text.lower()
    folded = unicodedata.normalize("NFKD", text.casefold())
    if folded.isascii():
        return folded
    return "".join(c for c in folded if not unicodedata.combining(c))


def normalize(text: str) -> str:
    """:func:`fold`, surrounding white space stripped and one final period dropped."""
    folded = fold(text).strip()
    if folded.endswith("."):
        folded = folded[:-1].rstrip()
    return folded


def squash(text: str) -> str:
    """:func:`fold`, with every run of white space collapsed to one space and trimmed."""
    return " ".join(fold(text).split())


def _to_float(token: str) -> float:
    return float(token.replace(",", ""))


def parse_number(text: str) -> float | None:
    """The value of ``text`` when all of it (after :func:`normalize`) is one number, else None.

    ``"19,753"``, ``" 19753.0 "``, ``"-3.5."`` and ``"1e3"`` are numbers; ``"$5"``,
    ``"60%"``, ``"about 7"`` and ``"1,2345"`` are not (currency signs, percent signs and
    surrounding words are not stripped: they change what the answer says).
    """
    return parse_normalized(normalize(text))


def parse_normalized(text: str) -> float | None:
    """:func:`parse_number` of a text that is already :func:`normalize` d (saves doing it twice)."""
    s = text.replace("\u2212", "-") if "\u2212" in text else text
    if not s or not _WHOLE_NUMBER.fullmatch(s):
        return None
    return _to_float(s)


def find_numbers(text: str) -> list[float]:
    """Every number standing alone in ``text``, in order (see the module docstring)."""
    if "\u2212" in text:
        text = text.replace("\u2212", "-")
    return [float(t) if "," not in t else _to_float(t) for t in NUMBER.findall(text)]


def same_number(a: float, b: float) -> bool:
    """True when ``|a - b| <= 0.01``."""
    return abs(a - b) <= TOLERANCE + _EPS


def any_same(x: float, values: Iterable[float]) -> bool:
    """True when some value in ``values`` is :func:`same_number` as ``x``."""
    return any(abs(x - v) <= TOLERANCE + _EPS for v in values)


def as_text(value: Any) -> str:
    """A tool result as text: a string as is, anything else as JSON (non-ASCII kept).

    The JSON text of a result object is cached by identity (bounded), since several
    scorers read the same result of the same trial.
    """
    if isinstance(value, str):
        return value
    return _json_text(Identity(value))


@functools.lru_cache(maxsize=256)
def _json_text(value: Identity) -> str:
    obj = value.obj
    if _C_JSON is not None:
        try:
            return "".join(_C_JSON(obj, 0))
        except Exception:
            pass  # json.dumps below gives the error (or the text)
    return json.dumps(obj, ensure_ascii=False, default=str)


def fmt_num(x: float) -> str:
    """A number as a user wrote it, without a needless ``.0``."""
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def quote(text: str, limit: int = 60) -> str:
    """``text`` as a JSON string (double quotes), cut to ``limit`` characters with "…"."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _encode_basestring(text)


@functools.lru_cache(maxsize=1024, typed=True)  # the same few fractions, again and again
def ratio(num: int, den: int) -> str:
    """``"3/6 = 0.5"``: a fraction and its value, for reasons."""
    return f"{num}/{den} = {num / den:.3g}"
