"""Prompt templates: turning a case into the text or messages sent to an agent.

A template is plain text with placeholders written ``{name}``:

- ``{input}``: the case's input (for a conversation, the last user message's text);
- ``{context}``, ``{expected}``, ``{notes}``: those case fields, empty when absent;
- ``{id}``: the case id;
- ``{key}``: any key of the case's ``metadata`` (strings as is, other values as JSON).

Only braces around a bare identifier are placeholders, so JSON examples in a prompt
(``{"city": "Paris"}``) are left alone. A placeholder naming a field the case does not
have is an :class:`~agenteval.errors.InputError` naming it; write ``{{`` and ``}}`` for
literal braces (``{{name}}`` renders as ``{name}``). Substituted values are never scanned
again, so an input containing braces is inserted verbatim.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from agenteval.cases.case import Case
from agenteval.errors import InputError

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CASE_FIELDS = ("input", "context", "expected", "notes", "id")


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def placeholder_value(case: Case, name: str) -> tuple[bool, Any]:
    """The raw value a placeholder ``{name}`` stands for: ``(found, value)``.

    Case fields (``input``, ``context``, ``expected``, ``notes``, ``id``) win over metadata
    keys of the same name. ``input`` is the case's input as given (a string or a list of
    messages); absent optional fields are ``None``.
    """
    if name in _CASE_FIELDS:
        return True, getattr(case, name)
    if name in case.metadata:
        return True, case.metadata[name]
    return False, None


def render_template(template: str, case: Case) -> str:
    """Render ``template`` for ``case`` (placeholder rules in the module docstring).

    ``{input}`` is the input text (:meth:`Case.input_text`); absent fields render as the
    empty string; non-string metadata values render as JSON. Raises ``InputError`` (field
    ``prompt_template``) naming the first placeholder the case cannot fill.
    """

    def repl(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok == "{{":
            return "{"
        if tok == "}}":
            return "}"
        name = m.group(1)
        if name == "input":
            return case.input_text()
        found, value = placeholder_value(case, name)
        if not found:
            known = ", ".join("{" + f + "}" for f in (*_CASE_FIELDS, *sorted(case.metadata)))
            raise InputError(
                f"placeholder {{{name}}} names no field of case '{case.id}' (known: {known});"
                " write {{ and }} for literal braces",
                field="prompt_template",
            )
        return _as_text(value)

    return _TOKEN.sub(repl, template)


def build_messages(case: Case, template: str | None) -> list[dict[str, Any]]:
    """The chat messages to send for ``case``.

    - String input: one user message, whose content is the input, or the rendered
      ``template`` when one is given.
    - A list of messages: a deep copy, as is. With a ``template``, the last user message
      whose content is text is replaced by the template rendered with ``{input}`` = that
      text; a conversation without such a message raises ``InputError``.
    """
    if isinstance(case.input, str):
        content = case.input if template is None else render_template(template, case)
        return [{"role": "user", "content": content}]
    messages = copy.deepcopy(case.input)
    if template is None:
        return messages
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            # Case.input_text() is this same message's text, so {input} renders to it.
            m["content"] = render_template(template, case)
            return messages
    raise InputError(
        f"case '{case.id}': a prompt template needs a user message with text content"
        " in the conversation",
        field="input",
    )
