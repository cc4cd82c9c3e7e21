"""The fake server's ``POST /v1/responses`` (OpenAI Responses API): a scripted tool loop.

The script is in the request's last user message: each ``[[call:NAME JSON]]`` marker is
one tool call (``JSON``: the arguments object, ``{}`` when left out), made in marker order,
one per model turn. A request whose input holds ``k`` ``function_call_output`` items
answers with the ``k+1``-th marker's call (a ``function_call`` item, ``call_id``
``call_<k+1>``); once every marker has its output it answers with a message: ``"echo:
<output of the last call>"``, or ``"echo: <user text>"`` with no marker. The script lives in
the request, not the server, so concurrent conversations never interfere.

``usage``: ``input_tokens`` counts the words of every input text and tool output,
``output_tokens`` the answer's words (1 for a call), ``total_tokens`` their sum; the
response's ``model`` is the request's.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

__all__ = ["CALL_MARKER", "response_for"]

CALL_MARKER = re.compile(r"\[\[call:([A-Za-z0-9_.-]+)\s*(.*?)\]\]", re.DOTALL)
"""``[[call:NAME JSON]]``: one scripted tool call."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if not isinstance(raw, list):
        raise TypeError("'input' must be a string or a list")
    return [i for i in raw if isinstance(i, dict)]


def _words(items: list[dict[str, Any]]) -> int:
    n = 0
    for i in items:
        n += len(_text(i.get("content")).split()) + len(str(i.get("output") or "").split())
    return n


def response_for(body: dict[str, Any], n: int) -> dict[str, Any]:
    """The Responses API body answering ``body`` (``n``: a number for the ids).

    Raises TypeError or ValueError for a body without a usable ``input`` or a marker whose
    arguments are not a JSON object.
    """
    items = _items(body)
    user = next((_text(i.get("content")) for i in reversed(items) if i.get("role") == "user"), "")
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    script = [(m.group(1), m.group(2).strip() or "{}") for m in CALL_MARKER.finditer(user)]
    for _, args in script:
        if not isinstance(json.loads(args), dict):
            raise ValueError(f"call arguments must be a JSON object: {args}")
    model = str(body.get("model") or "fake")
    item: dict[str, Any]
    if len(outputs) < len(script):
        k = len(outputs)
        name, args = script[k]
        item = {
            "type": "function_call",
            "id": f"fc_{n}_{k + 1}",
            "call_id": f"call_{k + 1}",
            "name": name,
            "arguments": args,
            "status": "completed",
        }
        out_words = 1
    else:
        text = f"echo: {outputs[-1].get('output', '') if outputs else user}"
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        out_words = len(text.split())
    in_words = _words(items)
    return {
        "id": f"resp_fake_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "usage": {
            "input_tokens": in_words,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out_words,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": in_words + out_words,
        },
    }
