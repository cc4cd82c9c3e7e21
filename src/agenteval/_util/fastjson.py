"""JSON read and written fast (orjson) with exactly the values and text of the slow way.

:func:`loads` gives what ``pydantic_core.from_json`` gives (the parser the run files were
read with), and raises ValueError where it raises: orjson parses first, and anything orjson
refuses or could read differently goes to ``from_json`` (NaN and Infinity, numbers out of
range, integers of 19 digits or more, which orjson reads as floats past 64 bits, lone
surrogates, byte order marks). :func:`dumps_str` spells a string as
``json.dumps(s, ensure_ascii=False)`` does (orjson escapes the same characters the same
way; a string with a lone surrogate, which orjson refuses, goes to json).

Why not :mod:`agenteval.traces.jsontext` (msgspec), the trace files' fast path: its
reference is ``json.loads`` (its values and exceptions), this one's ``from_json`` (run files
have always been read with it, and its ValueError is what a caller sees); each falls back
to its own reference, which the hypothesis tests of each check byte-for-byte; and this
module also writes (:func:`dumps_str`), which the trace reader never needs.

Measured on the rescore bench (bench/run.py, 1 KB trial lines): orjson.loads 7.3 µs a
line against from_json 10.8 µs; a score's reason spelled 0.3 µs against 1.5 µs.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic_core import from_json

__all__ = ["dumps_str", "loads"]

_DIGITS = bytes.maketrans(b"123456789", b"000000000")  # every digit spelled 0
_LONG_NUMBER = b"0" * 19  # 19 digits in a row (a regex search took 37 µs a line; this 1)
_STR_ENCODER = json.JSONEncoder(ensure_ascii=False)


def loads(data: bytes | str) -> Any:
    """``from_json(data)``, faster (see the module docstring); ValueError for bad JSON."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_NUMBER not in raw.translate(_DIGITS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # from_json decides (it reads NaN, big numbers) and words the error
    return from_json(data)


def dumps_str(s: str) -> str:
    """``json.dumps(s, ensure_ascii=False)`` for a str ``s``."""
    try:
        return orjson.dumps(s).decode()
    except TypeError:  # a lone surrogate: orjson refuses it, json writes it as is
        return _STR_ENCODER.encode(s)
