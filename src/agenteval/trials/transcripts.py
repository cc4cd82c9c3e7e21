"""Tool calls read from a transcript: the ``messages`` an agent returned.

Four message shapes are understood, and may be mixed in one transcript:

- **OpenAI chat**: an assistant message's ``tool_calls``
  (``{"id", "type": "function", "function": {"name", "arguments"}}``) answered by
  ``{"role": "tool", "tool_call_id", "content"}`` messages;
- **LangChain** message dicts: ``{"type": "ai", "tool_calls": [{"id", "name", "args"}]}``
  (and ``invalid_tool_calls``, whose ``args`` are kept as the raw string) answered by
  ``{"type": "tool", "tool_call_id", "content", "status"}``; ``status: "error"`` makes the
  content the call's error. The ``messages_to_dict`` form ``{"type", "data": {...}}`` and
  the serialised form ``{"lc": 1, "kwargs": {...}}`` are unwrapped first;
- **Anthropic** content blocks: ``{"type": "tool_use", "id", "name", "input"}`` answered
  by ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``; ``is_error: true``
  makes the content the call's error;
- **OpenTelemetry GenAI** message parts (also what PydanticAI records):
  ``{"parts": [{"type": "tool_call", "id", "name", "arguments"}]}`` answered by
  ``{"type": "tool_call_response", "id", "result"}`` (or ``response``).

Rules:

- Calls are listed in the order they appear; a call id seen again is the same call
  (listed once, at its first appearance).
- A result is paired with its call **by id**, wherever it appears (before or after the
  call). A result without an id is paired with the earliest call of that name (any
  name when the result names none) that has no result yet. A result that matches no
  call is ignored.
- Text content is kept as text (a list of text blocks is joined with newlines); other
  content is kept as given. An error result sets ``error`` and leaves ``result`` None.
  A result is an error when its message flags it (above) or when its text is shaped like
  an error (``Error: ...``, ``RuntimeError: ...``: the rule every path shares,
  :mod:`agenteval.trials.tool_errors`).
- Anything that is not one of these shapes is skipped: a transcript never makes the
  trial fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agenteval.trials.tool_errors import mark, output_error
from agenteval.trials.trial import ToolCall

__all__ = ["calls_from_messages", "unwrap_message"]


@dataclass(slots=True)
class _Call:
    id: str | None
    name: str
    arguments: Any
    result: Any = None
    error: str | None = None
    rule: tuple[str, str | None] | None = None
    answered: bool = False


@dataclass(slots=True)
class _Answer:
    id: str | None
    name: str | None
    content: Any
    is_error: bool


@dataclass(slots=True)
class _Reader:
    calls: list[_Call] = field(default_factory=list)
    by_id: dict[str, _Call] = field(default_factory=dict)
    answers: list[_Answer] = field(default_factory=list)

    def call(self, call_id: Any, name: Any, arguments: Any) -> None:
        if not isinstance(name, str) or not name:
            return
        cid = _id(call_id)
        if cid is not None and cid in self.by_id:
            return
        c = _Call(cid, name, {} if arguments is None else arguments)
        self.calls.append(c)
        if cid is not None:
            self.by_id[cid] = c

    def answer(self, call_id: Any, name: Any, content: Any, is_error: bool) -> None:
        nm = name if isinstance(name, str) and name else None
        self.answers.append(_Answer(_id(call_id), nm, content, is_error))


def _id(v: Any) -> str | None:
    if isinstance(v, str) and v:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def _text(content: Any) -> Any:
    """Text blocks joined with newlines; a plain string as is; anything else untouched."""
    if isinstance(content, list) and content and all(isinstance(b, dict) for b in content):
        texts = [b.get("text") for b in content if b.get("type") in ("text", None)]
        if texts and all(isinstance(t, str) for t in texts) and len(texts) == len(content):
            return "\n".join(t for t in texts if isinstance(t, str))
    return content


def unwrap_message(msg: dict[str, Any]) -> dict[str, Any]:
    """LangChain's serialised shapes (``{"lc": 1, "kwargs"}``, ``{"type", "data"}``),
    flattened to the plain message dict; any other dict as is."""
    kwargs = msg.get("kwargs")
    if msg.get("lc") == 1 and isinstance(kwargs, dict):
        ident = msg.get("id")
        kind = ident[-1] if isinstance(ident, list) and ident else ""
        flat = dict(kwargs)
        if "type" not in flat and isinstance(kind, str):
            flat["type"] = {"AIMessage": "ai", "ToolMessage": "tool"}.get(kind, kind)
        return flat
    data = msg.get("data")
    if isinstance(data, dict) and isinstance(msg.get("type"), str) and "role" not in msg:
        flat = dict(data)
        flat.setdefault("type", msg["type"])
        return flat
    return msg


def _read_message(r: _Reader, raw: dict[str, Any]) -> None:
    msg = unwrap_message(raw)
    role = msg.get("role") or msg.get("type")
    # OpenAI / LangChain tool calls on the message itself.
    for tc in msg.get("tool_calls") or ():
        if not isinstance(tc, dict):
            continue
        fn = tc.get("function")
        if isinstance(fn, dict):
            r.call(tc.get("id"), fn.get("name"), fn.get("arguments"))
        else:
            args = tc.get("args", tc.get("arguments", tc.get("input")))
            r.call(tc.get("id"), tc.get("name"), args)
    for tc in msg.get("invalid_tool_calls") or ():
        if isinstance(tc, dict):
            r.call(tc.get("id"), tc.get("name"), tc.get("args"))
    if role == "tool" and ("tool_call_id" in msg or "content" in msg):
        is_error = msg.get("status") == "error" or msg.get("is_error") is True
        r.answer(msg.get("tool_call_id"), msg.get("name"), _text(msg.get("content")), is_error)
    # Anthropic content blocks and GenAI parts.
    blocks: list[Any] = []
    for key in ("content", "parts"):
        value = msg.get(key)
        if isinstance(value, list):
            blocks.extend(value)
    for b in blocks:
        if isinstance(b, dict):
            _read_block(r, b)


def _read_block(r: _Reader, b: dict[str, Any]) -> None:
    kind = b.get("type")
    if kind == "tool_use":
        r.call(b.get("id"), b.get("name"), b.get("input"))
    elif kind == "tool_result":
        r.answer(b.get("tool_use_id"), None, _text(b.get("content")), b.get("is_error") is True)
    elif kind == "tool_call":
        r.call(b.get("id"), b.get("name"), b.get("arguments"))
    elif kind == "tool_call_response":
        content = b["result"] if "result" in b else b.get("response")
        r.answer(b.get("id"), b.get("name"), content, b.get("is_error") is True)


def _pair(r: _Reader) -> None:
    for a in r.answers:
        target: _Call | None = None
        if a.id is not None:
            target = r.by_id.get(a.id)
        else:
            target = next((c for c in r.calls if not c.answered and a.name in (None, c.name)), None)
        if target is None or target.answered:
            continue
        target.answered = True
        target.rule = output_error(a.content, a.is_error)
        if target.rule is not None:
            target.error = a.content if isinstance(a.content, str) else str(a.content)
        else:
            target.result = a.content


def calls_from_messages(messages: Iterable[Any]) -> list[ToolCall]:
    """Every tool call in ``messages``, in order, with its result or error (module rules)."""
    r = _Reader()
    for m in messages:
        if isinstance(m, dict):
            _read_message(r, m)
    _pair(r)
    out = []
    for c in r.calls:
        tc = ToolCall.model_validate(
            {
                "id": c.id,
                "name": c.name,
                "arguments": c.arguments,
                "result": c.result,
                "error": c.error,
            }
        )
        out.append(tc if c.rule is None else mark(tc, *c.rule))
    return out
