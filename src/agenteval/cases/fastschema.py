"""A fast validity check for the plain JSON Schemas that tool definitions usually use.

Tool ``parameters`` are nearly always a flat object of typed properties. Checking those
with ``jsonschema`` costs tens of microseconds per call; :func:`compile_check` turns such a
schema into a few Python closures instead. It only accepts schemas built from the keywords
below and returns None for anything else (``$ref``, ``anyOf``, ``const``, a ``$schema``
naming a draft, ...), in which case the caller uses ``jsonschema``. Its answers agree with
Draft 2020-12 as implemented by ``jsonschema`` (a property test checks this):

- ``type`` (one name or a list), ``enum`` of strings, ``properties``, ``required``,
  ``additionalProperties`` (boolean or schema), ``items`` (schema), ``minimum``,
  ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``minLength``, ``maxLength``,
  ``minItems``, ``maxItems``, ``pattern`` (a Python regular expression searched
  anywhere in the string, as ``jsonschema`` does with ``re.search``; compiled once; a
  pattern Python cannot compile falls back);
- annotations, which do not affect validity: ``title``, ``description``, ``default``,
  ``examples``, ``format`` (not asserted by default), ``$comment``, ``deprecated``,
  ``readOnly``, ``writeOnly``;
- ``true`` and ``false`` as schemas.

Only validity is decided here; the message for an invalid call still comes from
``jsonschema``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "format",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "pattern",
    }
)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "number": _is_number,
    "integer": _is_integer,
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}


def _ok(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def compile_check(schema: Any) -> Check | None:
    """A function telling whether an instance is valid, or None when unsupported."""
    if schema is True:
        return _ok
    if schema is False:
        return _never
    if not isinstance(schema, dict):
        return None
    keys = schema.keys() - _ANNOTATIONS
    if keys - _HANDLED:
        return None
    checks: list[Check] = []
    for build in (_type, _enum, _object, _array, _number, _string):
        part = build(schema)
        if part is None:
            return None
        checks.extend(part)
    if not checks:
        return _ok
    if len(checks) == 1:
        return checks[0]
    all_checks = tuple(checks)

    def check_all(x: Any) -> bool:
        for c in all_checks:  # noqa: SIM110 - a plain loop is faster than all(genexpr)
            if not c(x):
                return False
        return True

    return check_all


Parts = list[Check] | None


def _type(s: dict[str, Any]) -> Parts:
    if "type" not in s:
        return []
    t = s["type"]
    names = [t] if isinstance(t, str) else t
    if not isinstance(names, list) or not names or not all(n in _TYPES for n in names):
        return None
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return [tests[0]]
    return [lambda x: any(test(x) for test in tests)]


def _enum(s: dict[str, Any]) -> Parts:
    if "enum" not in s:
        return []
    values = s["enum"]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    allowed = frozenset(values)
    return [lambda x: isinstance(x, str) and x in allowed]


def _object(s: dict[str, Any]) -> Parts:
    props = s.get("properties", {})
    required = s.get("required", [])
    extra = s.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    if not all(isinstance(r, str) for r in required):
        return None
    sub: dict[str, Check] = {}
    for name, prop in props.items():
        c = compile_check(prop)
        if c is None:
            return None
        sub[name] = c
    extra_check = compile_check(extra)
    if extra_check is None:
        return None
    if not sub and not required and extra is True:
        return []
    req = tuple(dict.fromkeys(required))
    open_extra = extra is True

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True
        for r in req:
            if r not in x:
                return False
        for k, v in x.items():
            c = sub.get(k)
            if c is not None:
                if not c(v):
                    return False
            elif not open_extra and not extra_check(v):
                return False
        return True

    return [check]


def _array(s: dict[str, Any]) -> Parts:
    out: list[Check] = []
    if "items" in s:
        item = compile_check(s["items"])
        if item is None:
            return None
        out.append(lambda x: not isinstance(x, list) or all(item(v) for v in x))
    lo, hi = s.get("minItems", 0), s.get("maxItems")
    if not _is_count(lo) or (hi is not None and not _is_count(hi)):
        return None
    if lo or hi is not None:
        top = hi if hi is not None else float("inf")
        out.append(lambda x: not isinstance(x, list) or lo <= len(x) <= top)
    return out


def _string(s: dict[str, Any]) -> Parts:
    out: list[Check] = []
    if "pattern" in s:
        search = _searcher(s["pattern"])
        if search is None:
            return None
        out.append(lambda x: not isinstance(x, str) or search(x) is not None)
    lo, hi = s.get("minLength", 0), s.get("maxLength")
    if not _is_count(lo) or (hi is not None and not _is_count(hi)):
        return None
    if lo or hi is not None:
        top = hi if hi is not None else float("inf")
        out.append(lambda x: not isinstance(x, str) or lo <= len(x) <= top)
    return out


def _searcher(pattern: Any) -> Callable[[str], object] | None:
    if not isinstance(pattern, str):
        return None
    try:
        return re.compile(pattern).search
    except (re.error, RecursionError, OverflowError):
        return None


def _number(s: dict[str, Any]) -> Parts:
    out: list[Check] = []
    # Written as jsonschema decides failure (x < minimum fails, ...), so NaN agrees too.
    for key, fails in (
        ("minimum", lambda x, b: x < b),
        ("maximum", lambda x, b: x > b),
        ("exclusiveMinimum", lambda x, b: x <= b),
        ("exclusiveMaximum", lambda x, b: x >= b),
    ):
        if key not in s:
            continue
        bound = s[key]
        if not _is_number(bound):
            return None
        out.append(_bound_check(fails, bound))
    return out


def _bound_check(fails: Callable[[Any, Any], bool], bound: Any) -> Check:
    return lambda x: not _is_number(x) or not fails(x, bound)
