"""The matchers ``expected_calls`` compile to (:mod:`agenteval.cases.calls` has the
grammar): each node says why an actual value does not match it, or None when it does."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agenteval._util.text import normalize

_BFCL_STRIP = re.compile(r"[ ,./\-_*^]")
_SHOWN = 40  # characters of a value shown in a reason


def bfcl_standardize(text: str) -> str:
    """BFCL's string standardisation: drop spaces and ``,./-_*^``, lower case, ``'``→``"``."""
    return _BFCL_STRIP.sub("", text).lower().replace("'", '"')


@dataclass(frozen=True, slots=True)
class Rules:
    """How plain values compare (inherited downwards, overridable by modifiers)."""

    strings: str = "normalized"
    types: str = "loose"
    extra: bool = False


def show(value: Any) -> str:
    """A value as a reason shows it: strings in single quotes, others as JSON, cut short."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class Node:
    """A compiled argument spec. ``problem`` is None when ``actual`` matches."""

    optional: bool = False

    def problem(self, actual: Any, path: str) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


class Literal(Node):
    """A plain string, number, boolean or null."""

    def __init__(self, value: Any, rules: Rules) -> None:
        self.value = value
        self.rules = rules
        self.key: Any = self._key(value) if isinstance(value, str) else None

    def _key(self, s: str) -> str:
        if self.rules.strings == "exact":
            return s
        if self.rules.strings == "bfcl":
            return bfcl_standardize(s)
        return normalize(s)

    def problem(self, actual: Any, path: str) -> str | None:
        e = self.value
        if isinstance(e, str):
            ok = isinstance(actual, str) and self._key(actual) == self.key
        elif isinstance(e, bool) or e is None:
            ok = actual is e
        elif is_number(actual):
            ok = actual == e and (self.rules.types == "loose" or type(actual) is type(e))
        else:
            ok = False
        return None if ok else f"{path} differs"

    def describe(self) -> str:
        return show(self.value)


class ListNode(Node):
    """A plain list: same length, item by item."""

    def __init__(self, items: list[Node]) -> None:
        self.items = items

    def problem(self, actual: Any, path: str) -> str | None:
        if not isinstance(actual, list):
            return f"{path} is not a list"
        if len(actual) != len(self.items):
            return f"{path} has {len(actual)} items, expected {len(self.items)}"
        for i, (node, a) in enumerate(zip(self.items, actual, strict=True)):
            why = node.problem(a, f"{path}[{i}]")
            if why is not None:
                return why
        return None

    def describe(self) -> str:
        return "[" + ", ".join(n.describe() for n in self.items) + "]"


class ObjectNode(Node):
    """An object, member by member; members not named fail unless ``extra``."""

    def __init__(self, members: dict[str, Node], extra: bool) -> None:
        self.members = members
        self.extra = extra

    def problem(self, actual: Any, path: str) -> str | None:
        if not isinstance(actual, dict):
            return f"{path} is not an object" if path else "arguments are not a JSON object"
        for key, node in self.members.items():
            sub = f"{path}.{key}" if path else key
            if key not in actual:
                if node.optional:
                    continue
                return f"{sub} missing"
            why = node.problem(actual[key], sub)
            if why is not None:
                return why
        if not self.extra:
            for key in actual:
                if key not in self.members:
                    sub = f"{path}.{key}" if path else key
                    return f"unexpected argument {sub}"
        return None

    def describe(self) -> str:
        return "{" + self.arguments() + "}"

    def arguments(self) -> str:
        """``k='v', k2?=1`` (``?`` marks an optional member)."""
        return ", ".join(
            f"{k}{'?' if n.optional else ''}={n.describe()}" for k, n in self.members.items()
        )


class AnyOf(Node):
    def __init__(self, options: list[Node]) -> None:
        self.options = options

    def problem(self, actual: Any, path: str) -> str | None:
        if any(o.problem(actual, path) is None for o in self.options):
            return None
        return f"{path} differs"

    def describe(self) -> str:
        return "any of (" + ", ".join(o.describe() for o in self.options) + ")"


class Regex(Node):
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def problem(self, actual: Any, path: str) -> str | None:
        if isinstance(actual, str) and self.pattern.fullmatch(actual):
            return None
        return f"{path} differs"

    def describe(self) -> str:
        return f"/{self.pattern.pattern}/"


class Approx(Node):
    def __init__(self, value: float, tolerance: float) -> None:
        self.value = value
        self.tolerance = tolerance

    def problem(self, actual: Any, path: str) -> str | None:
        if is_number(actual) and abs(actual - self.value) <= self.tolerance:
            return None
        return f"{path} differs"

    def describe(self) -> str:
        return f"{show(self.value)}±{show(self.tolerance)}"


class Present(Node):
    def problem(self, actual: Any, path: str) -> str | None:
        return None

    def describe(self) -> str:
        return "<any>"


class UntrustedMatcher(Exception):
    """A ``$python`` matcher of a case read back from a run that is not trusted: its code
    was not imported, so it cannot be called (the scorer that needs it errors, naming it)."""


class PythonNode(Node):
    def __init__(self, fn: Callable[[Any], Any], target: str) -> None:
        self.fn = fn
        self.target = target

    def problem(self, actual: Any, path: str) -> str | None:
        try:
            ok = bool(self.fn(actual))
        except Exception as e:  # a matcher that raises does not match
            if isinstance(e, UntrustedMatcher):  # not imported: no verdict at all
                raise
            return f"{path}: {self.target} raised {type(e).__name__}"
        return None if ok else f"{path} differs"

    def describe(self) -> str:
        return f"<{self.target}>"
