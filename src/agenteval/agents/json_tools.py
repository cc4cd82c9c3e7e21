"""The tool loop's ``json`` tool format: tool calls as schema-constrained JSON replies.

For models whose chat template cannot express tools. The tools are listed in a system
message (:func:`tool_listing`, :data:`JSON_INSTRUCTIONS`) and every reply is constrained
by ``response_format`` with :func:`json_reply_schema`, which servers such as llama.cpp,
vLLM and Ollama compile into a grammar: a reply is ``{"tool": NAME, "arguments": {...}}``
or ``{"answer": TEXT}``. :func:`parse_json_reply` reads it back.
"""

from __future__ import annotations

import json
from typing import Any

JSON_INSTRUCTIONS = """You can call these tools (arguments as JSON):

{tools}

Reply with JSON only, in one of two forms:
{{"tool": "<tool name>", "arguments": {{<arguments>}}}} to call a tool, or
{{"answer": "<your final answer>"}} when you know the answer.
After a tool call you will get its result."""

JSON_REMINDER = (
    'Your reply was not in the required format. Reply with JSON only: {"tool": "<name>",'
    ' "arguments": {...}} or {"answer": "<text>"}.'
)


MAX_ANSWER_CHARS = 1000
"""``json`` format: longest answer a reply may carry (the grammar ends runaway strings)."""
MAX_ARGUMENT_CHARS = 200
"""``json`` format: longest string argument, unless the tool's schema sets its own."""

_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": MAX_ANSWER_CHARS}},
    "required": ["answer"],
}


def _cap_strings(schema: Any) -> Any:
    """A copy of ``schema`` where every string without a ``maxLength`` gets one."""
    if isinstance(schema, list):
        return [_cap_strings(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _cap_strings(v) for k, v in schema.items()}
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = MAX_ARGUMENT_CHARS
    return out


def json_reply_schema(definitions: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON Schema a reply must follow in ``json`` tool format: one branch per tool
    (``{"tool": const name, "arguments": that tool's parameters}``) plus ``{"answer": str}``;
    with no definitions, the answer branch alone. Strings are capped (answers at
    :data:`MAX_ANSWER_CHARS`, string arguments without their own ``maxLength`` at
    :data:`MAX_ARGUMENT_CHARS`) so that a model repeating itself still ends its reply;
    the tools' own schemas, offered on the trial, are unchanged."""
    if not definitions:
        return dict(_ANSWER_SCHEMA)
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "tool": {"const": d["name"]},
                "arguments": _cap_strings(d.get("parameters") or {"type": "object"}),
            },
            "required": ["tool", "arguments"],
        }
        for d in definitions
    ]
    branches.append(dict(_ANSWER_SCHEMA))
    return {"anyOf": branches}


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "|".join(json.dumps(v) for v in schema["enum"])
    if isinstance(schema.get("type"), str):
        return str(schema["type"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        kinds = [
            _type_of(o) for o in options if not (isinstance(o, dict) and o.get("type") == "null")
        ]
        return "|".join(kinds) or "null"
    return "any"


def _signature(parameters: dict[str, Any]) -> str:
    props = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    return ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_of(schema)}"
        for name, schema in props.items()
    )


def tool_listing(definitions: list[dict[str, Any]]) -> str:
    """The tools as the ``json`` format's system message lists them: one line each,
    ``- name(arg: type, optional?: type): description``. The exact schemas are enforced
    by the reply schema, so the listing stays short."""
    return "\n".join(
        f"- {d['name']}({_signature(d.get('parameters') or {})}): {d.get('description') or ''}"
        for d in definitions
    )


def parse_json_reply(content: str | None) -> tuple[str, Any, Any] | None:
    """What a ``json``-format reply asks for: ``("answer", text, None)``,
    ``("tool", name, arguments)``, or None when it is not such JSON."""
    if not content:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("tool"), str) and data["tool"]:
        return "tool", data["tool"], data.get("arguments", {})
    if isinstance(data, dict) and "answer" in data:
        answer = data["answer"]
        return "answer", answer if isinstance(answer, str) else json.dumps(answer), None
    return None
