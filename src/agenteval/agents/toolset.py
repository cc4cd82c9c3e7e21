"""The tools the built-in tool loop offers a model: Python functions and MCP servers.

A :class:`ToolSet` maps tool names to definitions (bare ``{name, description,
parameters}``, ``parameters`` a JSON Schema) and to something that runs the tool.

**Python functions.** The definition is derived from the function: the name is
``__name__``; the description is the docstring up to its first section (``Args:``,
``Returns:``, ``:param``...); each parameter's schema comes from its type hint (through
pydantic, so ``int``, ``str | None``, ``list[str]``, ``Literal[...]``, pydantic models and
dataclasses all work) and its description from a Google-style ``Args:`` entry or a
``:param name:`` line. Parameters without a default are ``required``. ``*args`` and
``**kwargs`` are not allowed; other arguments are refused (``additionalProperties`` is
false). Plain functions run on the tool set's own daemon threads
(:class:`~agenteval.agents.python.AgentThreads`: one per call in flight, reused when free),
never the event loop's default pool, so a hung tool holds one thread and delays no other
case's tools; ``async def`` functions are awaited.

**Calls.** :meth:`ToolSet.call` never raises for a bad call; it returns ``(result, error)``
with exactly one of them meaningful. The error is the text a model is shown:

- arguments that were not valid JSON (the raw string): ``arguments are not valid JSON``;
- a name no tool has: ``unknown tool 'x'; available: a, b``;
- arguments that do not validate against the tool's schema (the same check as the
  ``tool_arguments_valid`` scorer): ``invalid arguments: ...``;
- the tool raised: ``ExceptionType: message``.

A result is made JSON-compatible (pydantic's encoder; anything else becomes ``str``).
:meth:`ToolSet.run_call` does the same and fills a :class:`~agenteval.trials.trial.ToolCall`
with the result, error, start time and duration.

**MCP servers** (:mod:`agenteval.agents.mcp_tools`) join with :meth:`ToolSet.add_provider`;
their tools are listed when :meth:`ToolSet.start` connects, so :meth:`definitions` includes
them only after ``start``. Two tools with the same name are an ``InputError``.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, Protocol, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import to_jsonable_python

from agenteval._util.imports import load_module
from agenteval.cases.arguments import ArgumentChecker
from agenteval.errors import InputError
from agenteval.trials.trial import ToolCall

ToolFn = Callable[..., Any]
"""A Python function offered as a tool (sync or async)."""

Invoke = Callable[[dict[str, Any]], Awaitable[Any]]


class ToolError(Exception):
    """A tool reported failure; the message is what the model is shown."""


class ToolProvider(Protocol):
    """A source of tools that must be connected first (an MCP server)."""

    label: str

    async def start(self) -> list[tuple[dict[str, Any], Invoke]]:
        """Connect; return each tool's bare definition and a coroutine running it."""
        ...

    async def close(self) -> None:
        """Disconnect (idempotent)."""
        ...


_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Examples?|Notes?)"
    r"\s*:\s*$|^\s*:(param|type|returns?|rtype|raises)\b",
    re.IGNORECASE,
)
_GOOGLE_ARGS = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$", re.IGNORECASE)
_GOOGLE_ITEM = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a Google- or Sphinx-style docstring.

    The description is the text before the first section, with white space collapsed.
    """
    text = inspect.cleandoc(doc or "")
    lines = text.splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines) and not _SECTION.match(lines[i]):
        desc.append(lines[i])
        i += 1
    current: str | None = None
    in_args = False
    item_indent = -1
    for line in lines[i:]:
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            current, in_args = sphinx.group(1), False
            params[current] = sphinx.group(2).strip()
            continue
        if _GOOGLE_ARGS.match(line):
            in_args, current, item_indent = True, None, -1
            continue
        if _SECTION.match(line):
            in_args, current = False, None
            continue
        indent = len(line) - len(line.lstrip())
        item = _GOOGLE_ITEM.match(line) if in_args else None
        if item and (item_indent < 0 or indent <= item_indent):
            item_indent = indent
            current = item.group(2).lstrip("*")
            params[current] = item.group(4).strip()
        elif current is not None and line.strip():
            params[current] = (params[current] + " " + line.strip()).strip()
    return " ".join(" ".join(desc).split()), params


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keywords (property names are kept)."""
    if isinstance(schema, list):
        return [_strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            out[key] = {k: _strip_titles(v) for k, v in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


RunSync = Callable[..., Awaitable[Any]]


def function_tool(
    fn: ToolFn, name: str | None = None, *, run_sync: RunSync | None = None
) -> tuple[dict[str, Any], Invoke]:
    """The definition of a Python function as a tool, and a coroutine that runs it.

    A plain (sync) function runs through ``run_sync(fn, **arguments)``; by default on
    daemon threads of its own (:class:`~agenteval.agents.python.AgentThreads`).

    Raises ``InputError`` when the function takes ``*args``/``**kwargs`` or its type hints
    cannot be turned into a JSON Schema.
    """
    tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
    description, param_docs = parse_docstring(inspect.getdoc(fn))
    try:
        sig = inspect.signature(fn)
        hints = get_type_hints(fn)
    except (TypeError, ValueError, NameError) as e:
        raise InputError(f"tool '{tool_name}': cannot read its signature ({e})") from None
    fields: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise InputError(f"tool '{tool_name}': *args and **kwargs cannot be offered to a model")
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (
            hints.get(p.name, Any),
            Field(default, description=param_docs.get(p.name) or None),
        )
    try:
        model: type[BaseModel] = create_model(
            f"{tool_name}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        parameters = _strip_titles(model.model_json_schema())
    except Exception as e:
        raise InputError(
            f"tool '{tool_name}': its type hints have no JSON Schema ({type(e).__name__}: {e})"
        ) from None
    parameters.setdefault("properties", {})
    definition: dict[str, Any] = {"name": tool_name}
    if description:
        definition["description"] = description
    definition["parameters"] = parameters
    is_async = inspect.iscoroutinefunction(fn)
    run = run_sync or _OwnThreads().run

    async def invoke(arguments: dict[str, Any]) -> Any:
        parsed = model.model_validate(arguments)
        values = {k: getattr(parsed, k) for k in fields}
        if is_async:
            return await fn(**values)
        result = await run(fn, **values)
        if inspect.isawaitable(result):
            result = await result
        return result

    return definition, invoke


class _OwnThreads:
    """Daemon threads, started with the first call (not the event loop's default pool)."""

    def __init__(self) -> None:
        self.threads: Any = None  # AgentThreads, imported on first use

    async def run(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        if self.threads is None:
            # imported on first use, so that importing this module stays light
            from agenteval.agents.python import AgentThreads

            self.threads = AgentThreads("agenteval-tool")
        return await self.threads.call(fn, **kwargs)

    def close(self) -> None:
        if self.threads is not None:
            self.threads.close()
            self.threads = None


def _jsonable(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except Exception:  # any unencodable value becomes text
        return str(value)


def _module_functions(mod: ModuleType) -> list[ToolFn]:
    explicit = getattr(mod, "TOOLS", None)
    if explicit is not None:
        if not isinstance(explicit, list | tuple) or not all(callable(f) for f in explicit):
            raise InputError(f"tools module '{mod.__name__}': TOOLS must be a list of functions")
        return list(explicit)
    return [
        obj
        for name, obj in vars(mod).items()
        if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == mod.__name__
    ]


class ToolSet:
    """Named tools with JSON Schema definitions; see the module docstring for the rules."""

    def __init__(self) -> None:
        self._defs: dict[str, dict[str, Any]] = {}
        self._invoke: dict[str, Invoke] = {}
        self._checker: ArgumentChecker | None = None
        self._providers: list[ToolProvider] = []
        self._provided: list[str] = []
        self._sync = _OwnThreads()  # every sync tool of this set runs on these threads

    @classmethod
    def from_functions(cls, fns: Iterable[ToolFn]) -> ToolSet:
        """A tool set of these Python functions (definitions derived as documented above)."""
        ts = cls()
        for fn in fns:
            ts.add_function(fn)
        return ts

    @classmethod
    def from_module(cls, name: str) -> ToolSet:
        """The tools of a module: its ``TOOLS`` list if it has one, else every public function
        defined in it (not imported into it). ``name`` is a dotted module name (importable
        from the current directory) or a path to a ``.py`` file. InputError when it does not
        import or offers no tool."""
        mod = load_module(name, what="tools module", option="tools_module")
        fns = _module_functions(mod)
        if not fns:
            raise InputError(f"tools module '{name}' defines no public function")
        return cls.from_functions(fns)

    def add_function(self, fn: ToolFn, name: str | None = None) -> None:
        """Offer one Python function (under ``name``, default its ``__name__``)."""
        definition, invoke = function_tool(fn, name, run_sync=self._sync.run)
        self._add(definition, invoke, "Python function")

    def add_provider(self, provider: ToolProvider) -> None:
        """Add a source of tools (an MCP server) whose tools are listed on :meth:`start`."""
        self._providers.append(provider)

    def extend(self, other: ToolSet) -> None:
        """Add every tool and provider of ``other``."""
        for name, d in other._defs.items():
            self._add(d, other._invoke[name], "tool")
        self._providers.extend(other._providers)

    def _add(self, definition: dict[str, Any], invoke: Invoke, what: str) -> None:
        name = definition["name"]
        if name in self._defs:
            raise InputError(f"two tools are named '{name}' (the second is a {what})")
        self._defs[name] = definition
        self._invoke[name] = invoke
        self._checker = None

    async def start(self) -> None:
        """Connect every provider and add its tools (idempotent: only the first call does)."""
        if self._provided or not self._providers:
            return
        try:
            for provider in self._providers:
                for definition, invoke in await provider.start():
                    self._add(definition, invoke, provider.label)
                    self._provided.append(definition["name"])
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Disconnect every provider and forget its tools."""
        for name in self._provided:
            self._defs.pop(name, None)
            self._invoke.pop(name, None)
        self._provided.clear()
        self._checker = None
        self._sync.close()  # free threads end; a hung one ends when its call returns
        for provider in self._providers:
            await provider.close()

    @property
    def providers(self) -> list[ToolProvider]:
        """The providers added (MCP servers), in order."""
        return list(self._providers)

    def names(self) -> list[str]:
        """Tool names, in the order they were added."""
        return list(self._defs)

    def definitions(self) -> list[dict[str, Any]]:
        """Bare ``{name, description, parameters}`` definitions, in the order added."""
        return [dict(d) for d in self._defs.values()]

    async def call(self, name: str, arguments: Any) -> tuple[Any, str | None]:
        """Run one call: ``(result, None)``, or ``(None, error text)`` (never raises)."""
        if self._checker is None:
            self._checker = ArgumentChecker(list(self._defs.values()))
        probe = ToolCall(name=name, arguments=arguments)
        if isinstance(arguments, str):
            return None, "arguments are not valid JSON; send a JSON object"
        if name not in self._defs:
            available = ", ".join(self._defs) or "none"
            return None, f"unknown tool '{name}'; available: {available}"
        try:
            problem = self._checker.problem(probe)
        except ValueError as e:
            return None, str(e)
        if problem is not None:
            return None, f"invalid arguments: {problem}"
        try:
            result = await self._invoke[name](dict(arguments))
        except ToolError as e:
            return None, str(e) or "tool reported an error"
        except Exception as e:  # a tool may raise anything; the model sees it
            return None, f"{type(e).__name__}: {e}"
        return _jsonable(result), None

    async def run_call(self, call: ToolCall) -> ToolCall:
        """Run ``call`` and return it with result, error, start time and duration filled."""
        started = datetime.now(UTC)
        t0 = time.perf_counter()
        result, error = await self.call(call.name, call.arguments)
        return call.model_copy(
            update={
                "result": result,
                "error": error,
                "started_at": started,
                "duration_s": time.perf_counter() - t0,
            }
        )


def result_text(call: ToolCall) -> str:
    """What the model is shown for a finished call: the result as text, or ``ERROR: ...``."""
    if call.error is not None:
        return f"ERROR: {call.error}"
    if isinstance(call.result, str):
        return call.result
    return json.dumps(call.result, ensure_ascii=False)
