"""The fake server's scripted chat tool loop and its streaming (``"stream": true``) answers.

**Scripted chat tool loop** (as in :mod:`agenteval.testing.fake_responses`): when the last
user message holds ``[[call:NAME JSON]]`` markers, a chat completion request with ``k``
``role: tool`` messages answers with the ``k+1``-th marker's call (an assistant message
with one tool call, id ``call_<k+1>``); once every marker has its tool message, the usual
``"echo: <last tool message>"`` answer.

**Streaming**: a chat completion is sent as ``chat.completion.chunk`` events — the role,
the content word by word, each tool call as a first delta (id, name, empty arguments)
then its arguments in two halves, the finish reason; then, when the request has
``stream_options.include_usage``, a last chunk with no choices and the ``usage``; then
``data: [DONE]``. A Responses API answer is sent as ``response.created``,
``response.output_item.added``, ``response.output_text.delta`` (per word) or
``response.function_call_arguments.delta``, ``response.output_item.done`` and
``response.completed`` (with the whole response, usage included). Events go out one
``write`` each.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from agenteval.testing.fake_responses import CALL_MARKER

__all__ = ["chat_chunks", "chat_script_message", "responses_events", "send_events"]


def chat_script_message(messages: list[Any], user_text: str) -> dict[str, Any] | None:
    """The assistant message making the next scripted call, or None when none is left."""
    script = [(m.group(1), m.group(2).strip() or "{}") for m in CALL_MARKER.finditer(user_text)]
    k = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")
    if k >= len(script):
        return None
    name, args = script[k]
    call = {
        "id": f"call_{k + 1}",
        "type": "function",
        "function": {"name": name, "arguments": args},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def chat_chunks(payload: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A chat completion as the chunks of its stream (module docstring)."""
    choice = payload["choices"][0]
    message = choice["message"]
    head = {k: payload[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": "" if message.get("content") else None})]
    words = (message.get("content") or "").split(" ")
    for i, w in enumerate(words if message.get("content") else []):
        out.append(chunk({"content": w if i == 0 else " " + w}))
    for i, tc in enumerate(message.get("tool_calls") or []):
        fn, args = tc["function"], tc["function"]["arguments"]
        first = {"index": i, "id": tc["id"], "type": "function"}
        out.append(
            chunk({"tool_calls": [{**first, "function": {"name": fn["name"], "arguments": ""}}]})
        )
        for part in (args[: len(args) // 2], args[len(args) // 2 :]):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append({**head, "choices": [], "usage": payload["usage"]})
    return out


def responses_events(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses API answer as the events of its stream (module docstring)."""
    item = payload["output"][0]
    pending = {**payload, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": pending}]
    events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
    if item["type"] == "message":
        text = item["content"][0]["text"]
        for i, w in enumerate(text.split(" ")):
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": w if i == 0 else " " + w,
                }
            )
    else:
        events.append(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": 0,
                "delta": item["arguments"],
            }
        )
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append({"type": "response.completed", "response": payload})
    for n, ev in enumerate(events):
        ev["sequence_number"] = n
    return events


async def send_events(
    request: web.Request, events: list[dict[str, Any]], *, named: bool, done: bool
) -> web.StreamResponse:
    """Stream ``events`` as server-sent events (``event: <type>`` lines when ``named``;
    a final ``data: [DONE]`` when ``done``)."""
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    for ev in events:
        head = f"event: {ev['type']}\n" if named else ""
        await resp.write(f"{head}data: {json.dumps(ev)}\n\n".encode())
    if done:
        await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp
