"""Checking a tool call's arguments against the tool's JSON Schema.

Tool definitions come from the trial's ``tools``, else the case's, else the suite's (the
first of these that is non-empty). A call's arguments are valid when they parsed as JSON,
the call names a defined tool, and the arguments validate against that tool's
``parameters`` schema. Schemas are read with the draft their ``$schema`` names, Draft
2020-12 by default; ``format`` is not asserted.

Speed: compiled schemas live in bounded LRU caches — keyed by the schema's text, and for
the case's and suite's definition lists (shared by every trial of a case) by identity,
holding a reference so that an identity is never reused while cached. A definition list
seen for the first time is looked up by its content (its pickled form: equal bytes mean
the same values of the same types in the same order), so cases that each carry their own
copy of the same tools share one checker and compile nothing again. Plain schemas are
checked by :mod:`agenteval.cases.fastschema`; ``jsonschema`` handles the rest and
writes every message.

A checker remembers its last few verdicts by call identity (bounded, holding a reference
to each call, so an identity is never reused while remembered): ``tool_arguments_valid``
and ``tool_execution`` judge the same calls of the same trial with the same shared
checker, so each call's arguments are validated once per trial, not twice.
"""

from __future__ import annotations

import functools
import io
import pickle
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agenteval._util.identity import Identity
from agenteval.cases.fastschema import Check, compile_check
from agenteval.trials.trial import ToolCall, Trial

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

ToolDefs = Sequence[Mapping[str, Any]]

_WHY_LIMIT = 120
_OBJECT = {"type": "object"}
_MEMO_SIZE = 64  # verdicts a checker remembers (a trial rarely makes more calls)
_NOT_JSON = "arguments are not valid JSON"
_UNKNOWN = "unknown tool"


class _Key:
    """A cache key for a schema: equal when the schemas' texts are equal."""

    __slots__ = ("_hash", "schema", "text")

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.text = repr(schema)
        self._hash = hash(self.text)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.text == self.text


@functools.lru_cache(maxsize=512)
def _compile(key: _Key) -> tuple[Validator, Check | None]:
    # start-up laziness: jsonschema (with referencing, attrs, rpds) costs ~55 ms of every
    # command's import, and only tool definitions with schemas need it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    schema = key.schema
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        raise ValueError(f"not a valid JSON Schema: {e.message}") from None
    fast = compile_check(schema) if cls is Draft202012Validator else None
    return cls(schema), fast


class ArgumentChecker:
    """Checks calls against one set of tool definitions."""

    __slots__ = ("_compiled", "_memo", "_schemas", "_why")

    def __init__(self, defs: ToolDefs) -> None:
        self._schemas: dict[str, Any] = {str(d["name"]): d.get("parameters") for d in defs}
        self._compiled: dict[str, tuple[Validator, Check | None]] = {}
        self._memo: dict[Identity, str | None] = {}
        self._why: dict[tuple[str, bytes], str] = {}  # message by tool and pickled arguments

    def _get(self, name: str) -> tuple[Validator, Check | None]:
        got = self._compiled.get(name)
        if got is None:
            schema = self._schemas[name]
            try:
                got = _compile(_Key(_OBJECT if schema is None else schema))
            except ValueError as e:
                raise ValueError(f"tool '{name}': parameters is {e}") from None
            self._compiled[name] = got
        return got

    def is_valid(self, call: ToolCall) -> bool:
        """True when :meth:`problem` would return None, without wording any message.

        Raises ``ValueError`` when the tool's own ``parameters`` is not a valid schema.
        """
        memo = self._memo
        if memo:
            key = Identity(call)
            if key in memo:
                return memo[key] is None
        args = call.arguments
        if isinstance(args, str) or call.name not in self._schemas:
            return False
        validator, fast = self._get(call.name)
        return fast(args) if fast is not None else validator.is_valid(args)

    def problem(self, call: ToolCall) -> str | None:
        """Why the call's arguments are invalid, or None when they are valid.

        Raises ``ValueError`` when the tool's own ``parameters`` is not a valid schema.
        """
        key = Identity(call)
        memo = self._memo
        try:
            return memo[key]
        except KeyError:
            pass
        why = self._problem(call)
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[key] = why
        return why

    def _problem(self, call: ToolCall) -> str | None:
        args = call.arguments
        if isinstance(args, str):
            return _NOT_JSON
        if call.name not in self._schemas:
            return _UNKNOWN
        validator, fast = self._get(call.name)
        ok = fast(args) if fast is not None else validator.is_valid(args)
        if ok:
            return None
        # Agents repeat the same wrong arguments: word each message once (equal pickles
        # are the same values of the same types in the same order, so the same message).
        try:
            key = (call.name, _pickled(args))
        except Exception:
            return _message(validator, args)
        why = self._why.get(key)
        if why is None:
            why = _message(validator, args)
            if len(self._why) >= _MEMO_SIZE:
                self._why.clear()
            self._why[key] = why
        return why


def _message(validator: Validator, args: Any) -> str:
    from jsonschema.exceptions import best_match  # loaded by _compile already

    err = best_match(validator.iter_errors(args))
    if err is None:  # pragma: no cover - the checks above said there is one
        return "arguments do not match the schema"
    where = err.json_path
    why = err.message if where == "$" else f"at {where}: {err.message}"
    if len(why) > _WHY_LIMIT:
        why = why[: _WHY_LIMIT - 1] + "…"
    return why


class _DefsKey:
    """A cache key for a definition list: equal when the lists' contents are identical."""

    __slots__ = ("_hash", "defs", "text")

    def __init__(self, defs: ToolDefs) -> None:
        self.defs = defs
        self.text: object
        try:
            self.text = _pickled(defs)
        except Exception:  # not picklable (or cyclic): its text, as _Key uses
            try:
                self.text = repr(defs)
            except Exception:  # not even that: a key equal to no other
                self.text = object()
        self._hash = hash(self.text)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DefsKey) and other.text == self.text


def _pickled(value: Any) -> bytes:
    # Without the memo ("fast" mode): quicker, and the bytes do not depend on which parts
    # happen to be the same object.
    out = io.BytesIO()
    pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(value)
    return out.getvalue()


@functools.lru_cache(maxsize=256)
def _shared_checker(defs: Identity) -> ArgumentChecker:
    return _checker_by_content(_DefsKey(defs.obj))


@functools.lru_cache(maxsize=64)
def _checker_by_content(key: _DefsKey) -> ArgumentChecker:
    return ArgumentChecker(key.defs)


def checker_for(
    trial: Trial, case_tools: ToolDefs | None, suite: ToolDefs
) -> ArgumentChecker | None:
    """The checker for the definitions that apply: trial's, else case's, else the suite's.

    None when none of them holds a definition.
    """
    defs = trial.tools or case_tools or suite
    if not defs:
        return None
    return _shared_checker(Identity(defs))


def valid_json_only(call: ToolCall) -> str | None:
    """The check used when no definitions are known: arguments must have parsed as JSON."""
    return _NOT_JSON if isinstance(call.arguments, str) else None
