"""The ``expected_calls`` grammar, compiled into matchers (see docs/formats.md).

A case's ``expected_calls`` is a list of calls ``{"name", "arguments", ...}``. Each
argument is a *plain value* or a *matcher*:

- a plain string, number, boolean or null matches an equal value (rules below);
- a plain list matches a list of the same length, item by item, in order;
- a plain object (no key starting with ``$``) matches an object member by member, each
  member being again a plain value or a matcher;
- a matcher is an object whose keys all start with ``$``, with exactly one kind:
  ``$any_of`` (a list: any of these specs), ``$regex`` (the whole string matches,
  :func:`re.fullmatch`), ``$approx`` (a number; with ``$tolerance``, default 0, the
  absolute distance allowed, inclusive), ``$present`` (``true``: any value), ``$python``
  (``"package.module:function"``, called with the actual value; a truthy result
  matches, an exception does not), ``$value`` (a literal: its objects are compared as
  plain objects even when their keys start with ``$``) or ``$object`` (a plain object
  whose member names may start with ``$``);
- modifiers on a matcher: ``$optional`` (an object member that may be absent),
  ``$strings``, ``$types`` and ``$extra`` (as the call-level settings below, for this
  value and what it contains).

**Equality rules.** Strings (``strings``): ``"normalized"`` (the default: exact_match's
normalisation — case and accents folded, surrounding white space and one final period
dropped), ``"exact"``, or ``"bfcl"`` (BFCL's: spaces and ``,./-_*^`` removed, lower
case, ``'`` read as ``"``). Numbers (``types``): ``"loose"`` (the default: ``10`` equals
``10.0``) or ``"strict"`` (an integer never equals a float). ``true`` is never ``1``, and
a string is never a number, under either rule. Objects (``extra``): members not in the
spec fail unless extra members are allowed (default: not allowed; the call-level
``extra_arguments`` sets it for the call's arguments and every object inside them).

A call's ``name`` compares exactly; it may also be a matcher (``{"$regex": ".+"}``: any
tool; ``{"$any_of": ["a", "b"]}``), whose strings compare exactly. A call whose arguments
are not a JSON object (raw text that did not parse) matches no expected call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from agenteval.cases.call_nodes import (
    AnyOf,
    Approx,
    ListNode,
    Literal,
    Node,
    ObjectNode,
    Present,
    PythonNode,
    Regex,
    Rules,
    UntrustedMatcher,
    is_number,
    show,
)

STRING_RULES = ("normalized", "exact", "bfcl")
TYPE_RULES = ("loose", "strict")
_KINDS = ("$any_of", "$regex", "$approx", "$present", "$python", "$value", "$object")
_MODIFIERS = ("$optional", "$strings", "$types", "$extra", "$tolerance")
_CALL_KEYS = ("name", "arguments", "extra_arguments", "strings", "types")


class SpecError(ValueError):
    """An ``expected_calls`` entry that is not in the grammar; the message says where."""


@dataclass(frozen=True, slots=True)
class CallSpec:
    """One expected call: a name and an object matcher for its arguments."""

    name: str
    arguments: ObjectNode
    name_matcher: Node | None = None  # when ``name`` was given as a matcher

    def problem(self, name: str, arguments: Any) -> str | None:
        """None when a call of ``name`` with ``arguments`` matches; else the first reason."""
        if self.name_matcher is None:
            if name != self.name:
                return "name differs"
        elif self.name_matcher.problem(name, "name") is not None:
            return "name differs"
        return self.arguments.problem(arguments, "")

    def describe(self) -> str:
        """``get_weather(city='Oslo')``."""
        return f"{self.name}({self.arguments.arguments()})"


def show_call(name: str, arguments: Any) -> str:
    """A made call as reasons show it: ``get_weather(city='Olso')``."""
    if isinstance(arguments, dict):
        inner = ", ".join(f"{k}={show(v)}" for k, v in arguments.items())
    else:
        inner = show(arguments)
    return f"{name}({inner})"


LoadCallable = Callable[[str], Callable[[Any], Any]]


def compile_calls(raw: Any, load: LoadCallable) -> list[CallSpec]:
    """Compile a whole ``expected_calls`` value; SpecError names the call and argument.

    ``load`` imports a ``$python`` target (raising ValueError with a message).
    """
    if not isinstance(raw, list):
        raise SpecError("must be a list of calls {name, arguments}")
    return [_compile_call(c, i, load) for i, c in enumerate(raw, 1)]


def _compile_call(raw: Any, n: int, load: LoadCallable) -> CallSpec:
    where = f"call {n}"
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: must be an object {{name, arguments}}")
    unknown = [k for k in raw if k not in _CALL_KEYS]
    if unknown:
        raise SpecError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(_CALL_KEYS)})")
    name = raw.get("name")
    name_matcher: Node | None = None
    if isinstance(name, dict):
        name_matcher = _matcher(name, Rules(strings="exact"), f"{where}: 'name'", load)
        name = name_matcher.describe()
    elif not isinstance(name, str) or not name:
        raise SpecError(f"{where}: 'name' must be a non-empty string or a matcher")
    where = f"call {n} ({name})"
    rules = _rules(Rules(), raw, where, "strings", "types", "extra_arguments")
    args = raw.get("arguments", {})
    if not isinstance(args, dict):
        raise SpecError(f"{where}: 'arguments' must be an object")
    members = {k: _compile(v, rules, f"{where}, argument '{k}'", load) for k, v in args.items()}
    return CallSpec(name, ObjectNode(members, rules.extra), name_matcher)


def _rules(base: Rules, raw: dict[str, Any], where: str, s: str, t: str, x: str) -> Rules:
    out = base
    if s in raw:
        if raw[s] not in STRING_RULES:
            raise SpecError(f"{where}: '{s}' must be one of {', '.join(STRING_RULES)}")
        out = replace(out, strings=raw[s])
    if t in raw:
        if raw[t] not in TYPE_RULES:
            raise SpecError(f"{where}: '{t}' must be one of {', '.join(TYPE_RULES)}")
        out = replace(out, types=raw[t])
    if x in raw:
        if not isinstance(raw[x], bool):
            raise SpecError(f"{where}: '{x}' must be true or false")
        out = replace(out, extra=raw[x])
    return out


def _compile(raw: Any, rules: Rules, where: str, load: LoadCallable) -> Node:
    if isinstance(raw, dict) and any(isinstance(k, str) and k.startswith("$") for k in raw):
        return _matcher(raw, rules, where, load)
    return _plain(raw, rules, where, load)


def _plain(raw: Any, rules: Rules, where: str, load: LoadCallable, literal: bool = False) -> Node:
    if isinstance(raw, dict):
        sub = _plain if literal else _compile
        members = {str(k): sub(v, rules, f"{where}.{k}", load) for k, v in raw.items()}
        return ObjectNode(members, rules.extra)
    if isinstance(raw, list):
        sub = _plain if literal else _compile
        return ListNode([sub(v, rules, f"{where}[{i}]", load) for i, v in enumerate(raw)])
    if isinstance(raw, float) and not math.isfinite(raw):
        raise SpecError(f"{where}: numbers must be finite")
    if raw is None or isinstance(raw, str | int | float | bool):
        return Literal(raw, rules)
    raise SpecError(f"{where}: {type(raw).__name__} is not a JSON value")


def _matcher(raw: dict[str, Any], rules: Rules, where: str, load: LoadCallable) -> Node:
    plain = [k for k in raw if not (isinstance(k, str) and k.startswith("$"))]
    if plain:
        raise SpecError(
            f"{where}: mixes matcher keys with plain key '{plain[0]}' (put a plain object"
            " whose keys start with $ under $object)"
        )
    unknown = [k for k in raw if k not in _KINDS and k not in _MODIFIERS]
    if unknown:
        raise SpecError(
            f"{where}: unknown matcher key '{unknown[0]}' (known: {', '.join(_KINDS + _MODIFIERS)})"
        )
    kinds = [k for k in raw if k in _KINDS]
    if len(kinds) != 1:
        raise SpecError(f"{where}: a matcher needs exactly one of {', '.join(_KINDS)}")
    kind, arg = kinds[0], raw[kinds[0]]
    rules = _rules(rules, raw, where, "$strings", "$types", "$extra")
    if "$tolerance" in raw and kind != "$approx":
        raise SpecError(f"{where}: $tolerance goes with $approx only")
    node: Node
    if kind == "$any_of":
        if not isinstance(arg, list):
            raise SpecError(f"{where}: $any_of must be a list")
        node = AnyOf(
            [_compile(v, rules, f"{where} option {i}", load) for i, v in enumerate(arg, 1)]
        )
    elif kind == "$regex":
        if not isinstance(arg, str):
            raise SpecError(f"{where}: $regex must be a string")
        try:
            node = Regex(re.compile(arg))
        except re.error as e:
            raise SpecError(f"{where}: $regex is not a valid regular expression ({e})") from None
    elif kind == "$approx":
        tol = raw.get("$tolerance", 0)
        if not is_number(arg) or not math.isfinite(arg):
            raise SpecError(f"{where}: $approx must be a number")
        if not is_number(tol) or not math.isfinite(tol) or tol < 0:
            raise SpecError(f"{where}: $tolerance must be a number >= 0")
        node = Approx(float(arg), float(tol))
    elif kind == "$present":
        if arg is not True:
            raise SpecError(f"{where}: $present must be true")
        node = Present()
    elif kind == "$python":
        if not isinstance(arg, str):
            raise SpecError(f"{where}: $python must be 'package.module:function'")
        try:
            fn = load(arg)
        except ValueError as e:
            raise SpecError(f"{where}: {e}") from None
        node = PythonNode(fn, arg)
    elif kind == "$value":
        node = _plain(arg, rules, where, load, literal=True)
    else:  # $object
        if not isinstance(arg, dict):
            raise SpecError(f"{where}: $object must be an object")
        node = ObjectNode(
            {str(k): _compile(v, rules, f"{where}.{k}", load) for k, v in arg.items()},
            rules.extra,
        )
    opt = raw.get("$optional", False)
    if not isinstance(opt, bool):
        raise SpecError(f"{where}: $optional must be true or false")
    node.optional = opt
    return node


def _load_matcher(target: str) -> Any:
    # The user's module is imported only when a case names a ``$python`` matcher.
    from agenteval._util.imports import load_callable
    from agenteval.errors import InputError

    try:
        return load_callable(target, what="$python matcher")
    except InputError as e:
        raise ValueError(str(e)) from None


class _NotImported:
    """Stands for a ``$python`` matcher whose module was not imported."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __call__(self, value: Any) -> bool:
        raise UntrustedMatcher(
            f"$python matcher {self.target} was not imported: code a run's cases name is"
            " imported only for a run you trust (agenteval rescore --trust-run)"
        )


def compile_expected_calls(raw: Any, *, import_code: bool = True) -> list[CallSpec]:
    """A case's (or a turn's) ``expected_calls``, compiled; ``$python`` matchers loaded,
    or, with ``import_code`` False (a case read back from a run), left unimported: calling
    one raises :class:`UntrustedMatcher`.

    Raises ValueError naming the call and argument, for pydantic to report on the field.
    """
    return compile_calls(raw, _load_matcher if import_code else _NotImported)
