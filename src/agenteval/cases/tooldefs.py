"""Tool definitions: what the agent was offered, in one canonical shape.

Accepted inputs are the OpenAI function format
``{"type": "function", "function": {"name", "description", "parameters"}}`` or the bare inner
object ``{"name", "description", "parameters"}``. Both become the bare inner object, with
``parameters`` defaulting to an empty-object schema. ``parameters`` is a JSON Schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agenteval.errors import InputError

IDEMPOTENT = "x-idempotent"
"""Definition key: ``false`` marks a tool whose repeated identical calls are not redundant
(kept by :func:`normalize_tool_def`, never sent to a model)."""


def normalize_tool_def(raw: Any) -> dict[str, Any]:
    """Return the bare ``{name, description, parameters}`` form of one tool definition.

    Raises ``ValueError`` (with a message fit for a user) when ``raw`` is not a tool definition.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"a tool definition must be an object, got {type(raw).__name__}")
    inner: dict[str, Any] = raw
    if raw.get("type") == "function" or "function" in raw:
        fn = raw.get("function")
        if not isinstance(fn, dict):
            raise ValueError("'function' must be an object with a 'name'")
        inner = fn
    name = inner.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a tool definition needs a non-empty string 'name'")
    params = inner.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(params, dict):
        raise ValueError(f"tool '{name}': 'parameters' must be a JSON Schema object")
    out: dict[str, Any] = {"name": name, "parameters": params}
    desc = inner.get("description")
    if desc is not None:
        out["description"] = desc
    idem = inner.get(IDEMPOTENT, raw.get(IDEMPOTENT))
    if idem is not None:
        if not isinstance(idem, bool):
            raise ValueError(f"tool '{name}': '{IDEMPOTENT}' must be true or false")
        out[IDEMPOTENT] = idem
    return out


def normalize_tool_defs(raw: Iterable[Any]) -> list[dict[str, Any]]:
    """Normalise a list of tool definitions; names must be unique."""
    defs = [normalize_tool_def(item) for item in raw]
    seen: set[str] = set()
    for d in defs:
        if d["name"] in seen:
            raise ValueError(f"tool '{d['name']}' is defined twice")
        seen.add(d["name"])
    return defs


def as_openai_tools(defs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The OpenAI ``tools`` request field for bare definitions."""
    return [
        {"type": "function", "function": {k: v for k, v in d.items() if k != IDEMPOTENT}}
        for d in defs
    ]


def tool_list_field(value: Any) -> list[dict[str, Any]] | None:
    """Validator body for a ``tools`` field: None stays None, a list is normalised."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("must be a list of tool definitions")
    return normalize_tool_defs(value)


def load_tool_file(path: str | Path) -> list[dict[str, Any]]:
    """Read a list of tool definitions from a JSON or YAML file (a list, or a mapping with a
    ``tools`` list), normalised. YAML goes through :func:`agenteval._util.yaml_guard.safe_load`
    (alias bombs refused). Any problem raises InputError naming the file."""
    import yaml

    # imported on first use, so that importing this module stays light
    from agenteval._util import yaml_guard

    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=path) from None
    try:
        data = json.loads(text) if path.endswith(".json") else yaml_guard.safe_load(text, path)
    except (ValueError, yaml.YAMLError, RecursionError) as e:
        detail = "nested too deeply" if isinstance(e, RecursionError) else " ".join(str(e).split())
        raise InputError(f"not valid JSON/YAML ({detail})", file=path) from None
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise InputError("must hold a list of tool definitions", file=path)
    try:
        return normalize_tool_defs(data)
    except ValueError as e:
        raise InputError(str(e), file=path) from None
