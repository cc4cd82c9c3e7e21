"""The wire side of the recording proxy: reading request and response bodies.

From the **request** body (JSON; anything else is left unread): the requested ``model``,
whether it asked to ``stream``, the tool definitions offered (``tools``) and the tool
outputs the agent sends back — chat completions ``{"role": "tool", "tool_call_id",
"content"}`` messages, Responses API ``{"type": "function_call_output", "call_id",
"output"}`` items (text parts joined). From the **response** (a JSON body, or a
``text/event-stream`` read event by event as the bytes pass; gzip and deflate are decoded
for reading only): the model that answered, token usage (chat: ``usage``, in a stream the
final chunk's, present only when the agent asked for it with
``stream_options.include_usage``; Responses: the ``usage`` of the final response, in a
stream the ``response.completed`` event's), cached and reasoning token counts, and the
tool calls the model requested (chat ``tool_calls``, assembled from the deltas of a
stream; Responses ``function_call`` items). A response that cannot be read (not JSON, a
broken event, an unknown encoding, a body or pending event over :data:`READ_MAX` bytes
once decoded) is still forwarded unchanged; the call is recorded with ``unparsed`` saying
why. An error response (status >= 400 with an ``error`` object)
records only its status.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from agenteval.cases.tooldefs import normalize_tool_def
from agenteval.traces.proxy_records import ModelCall, RequestedCall, ToolOutput

__all__ = ["READ_MAX", "ResponseReader", "read_request"]

READ_MAX = 64 << 20
"""The most bytes of a response (decoded) held for reading; a larger body, or stream event,
is forwarded but not read (a gzip body may inflate a thousandfold)."""


def _text(content: Any) -> Any:
    """A list of text parts joined; a string as is; anything else untouched."""
    if isinstance(content, list) and content and all(isinstance(p, dict) for p in content):
        texts = [p.get("text") for p in content]
        if all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return content


def _tool_def(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or raw.get("type", "function") != "function":
        return None
    if "function" not in raw:  # Responses API: {"type": "function", "name", "parameters"}
        raw = {k: v for k, v in raw.items() if k != "type"}
    try:
        return normalize_tool_def(raw)
    except ValueError:
        return None


def read_request(call: ModelCall, body: bytes) -> None:
    """Fill ``call``'s model, stream flag, tools and tool outputs from a request body."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return
    if not isinstance(data, dict):
        return
    if isinstance(data.get("model"), str):
        call.model = data["model"]
    call.stream = data.get("stream") is True
    for raw in _list(data.get("tools")):
        d = _tool_def(raw)
        if d is not None:
            call.tools.append(d)
    items = data.get("messages") if call.api == "chat" else data.get("input")
    for m in items if isinstance(items, list) else ():
        if not isinstance(m, dict):
            continue
        if call.api == "chat" and m.get("role") == "tool":
            call.outputs.append(ToolOutput(_id(m.get("tool_call_id")), _text(m.get("content"))))
        elif m.get("type") == "function_call_output":
            call.outputs.append(ToolOutput(_id(m.get("call_id")), _text(m.get("output"))))


def _id(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _list(v: Any) -> list[Any]:
    """``v`` when it is a list, else empty: a field of the wrong type is left unread."""
    return v if isinstance(v, list) else []


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class ResponseReader:
    """Reads a response as its bytes pass (:meth:`feed`), then fills a call (:meth:`finish`)."""

    def __init__(self, api: str, content_type: str, encoding: str) -> None:
        self.api = api
        self.sse = content_type.split(";")[0].strip().lower() == "text/event-stream"
        self._buf = bytearray()
        self._events: list[Any] = []
        self.problem: str | None = None
        self._inflate: Any = None
        enc = encoding.strip().lower()
        if enc in ("gzip", "deflate"):
            self._inflate = zlib.decompressobj(wbits=47)  # gzip or zlib header
        elif enc not in ("", "identity"):
            self.problem = f"content-encoding {enc} is not read"

    def feed(self, chunk: bytes) -> None:
        """The next bytes of the body, as forwarded."""
        if self.problem is not None or self.api == "other":
            return
        room = READ_MAX - len(self._buf)
        if self._inflate is not None:
            try:
                chunk = self._inflate.decompress(chunk, room + 1)
            except zlib.error as e:
                self.problem = f"body does not decode: {e}"
                return
        if len(chunk) > room:
            self.problem = f"over {READ_MAX >> 20} MiB decoded, not read"
            self._buf = bytearray()
            return
        self._buf += chunk
        if self.sse:
            self._split_events(final=False)

    def _split_events(self, *, final: bool) -> None:
        text = self._buf.replace(b"\r\n", b"\n")
        parts = text.split(b"\n\n")
        rest = b"" if final else parts.pop()
        self._buf = bytearray(rest)
        for part in parts:
            data = [ln[5:].lstrip() for ln in part.split(b"\n") if ln.startswith(b"data:")]
            if not data:
                continue
            payload = b"\n".join(data)
            if payload.strip() == b"[DONE]":
                continue
            try:
                self._events.append(json.loads(payload))
            except (ValueError, RecursionError):
                self.problem = self.problem or f"stream event is not JSON: {_short(payload)}"

    def finish(self, call: ModelCall) -> None:
        """Put what the body said into ``call`` (``unparsed`` when it could not be read)."""
        if self.api == "other" or self.problem is not None:
            call.unparsed = self.problem if self.api != "other" else None
            return
        if self.sse:
            self._split_events(final=True)
            if self.problem is None:
                (_chat_stream if self.api == "chat" else _responses_stream)(self._events, call)
        else:
            try:
                data = json.loads(bytes(self._buf))
            except (ValueError, RecursionError):
                self.problem = f"response is not JSON: {_short(bytes(self._buf))}"
            else:
                if not isinstance(data, dict):
                    self.problem = "response is not a JSON object"
                elif "error" in data and call.status is not None and call.status >= 400:
                    pass  # an API error: nothing to record but the status
                else:
                    (_chat_body if self.api == "chat" else _responses_body)(data, call)
        call.unparsed = self.problem


def _short(raw: bytes) -> str:
    text = raw[:80].decode("utf-8", "replace")
    return text + ("..." if len(raw) > 80 else "")


def _usage(call: ModelCall, usage: Any, names: tuple[str, str]) -> None:
    if not isinstance(usage, dict):
        return
    call.input_tokens = _int(usage.get(names[0]))
    call.output_tokens = _int(usage.get(names[1]))
    for key, detail, name in (
        (f"{names[0].split('_')[0]}_tokens_details", "cached_tokens", "cache_read.input_tokens"),
        (f"{names[1].split('_')[0]}_tokens_details", "reasoning_tokens", "reasoning.output_tokens"),
    ):
        inner = usage.get(key)
        n = _int(inner.get(detail)) if isinstance(inner, dict) else None
        if n:
            call.details[name] = n


def _chat_body(data: dict[str, Any], call: ModelCall) -> None:
    if isinstance(data.get("model"), str):
        call.model = data["model"]
    _usage(call, data.get("usage"), ("prompt_tokens", "completion_tokens"))
    for choice in _list(data.get("choices")):
        msg = choice.get("message") if isinstance(choice, dict) else None
        for tc in _list(msg.get("tool_calls") if isinstance(msg, dict) else None):
            fn = tc.get("function") if isinstance(tc, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
                args = fn.get("arguments")
                call.requested.append(
                    RequestedCall(
                        _id(tc.get("id")),
                        fn["name"],
                        args if isinstance(args, str) else json.dumps(args),
                    )
                )


def _chat_stream(events: list[Any], call: ModelCall) -> None:
    calls: dict[tuple[int, int], RequestedCall] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        if isinstance(ev.get("model"), str):
            call.model = ev["model"]
        if isinstance(ev.get("usage"), dict):
            _usage(call, ev["usage"], ("prompt_tokens", "completion_tokens"))
        for choice in _list(ev.get("choices")):
            delta = choice.get("delta") if isinstance(choice, dict) else None
            for tc in _list(delta.get("tool_calls") if isinstance(delta, dict) else None):
                if not isinstance(tc, dict):
                    continue
                key = (_int(choice.get("index")) or 0, _int(tc.get("index")) or 0)
                rc = calls.setdefault(key, RequestedCall(None, ""))
                rc.id = rc.id or _id(tc.get("id"))
                fn = tc.get("function")
                if isinstance(fn, dict):
                    if isinstance(fn.get("name"), str):
                        rc.name += fn["name"]
                    if isinstance(fn.get("arguments"), str):
                        rc.arguments += fn["arguments"]
    call.requested.extend(c for _, c in sorted(calls.items()) if c.name)


def _responses_body(data: dict[str, Any], call: ModelCall) -> None:
    if isinstance(data.get("model"), str):
        call.model = data["model"]
    _usage(call, data.get("usage"), ("input_tokens", "output_tokens"))
    for item in _list(data.get("output")):
        if isinstance(item, dict) and item.get("type") == "function_call":
            name, args = item.get("name"), item.get("arguments")
            if isinstance(name, str) and name:
                cid = _id(item.get("call_id")) or _id(item.get("id"))
                call.requested.append(
                    RequestedCall(cid, name, args if isinstance(args, str) else "")
                )


def _responses_stream(events: list[Any], call: ModelCall) -> None:
    final = None
    items = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        if isinstance(ev.get("response"), dict) and ev.get("type") in (
            "response.completed",
            "response.incomplete",
            "response.failed",
        ):
            final = ev["response"]
        elif ev.get("type") == "response.output_item.done" and isinstance(ev.get("item"), dict):
            items.append(ev["item"])
    _responses_body(final if final is not None else {"output": items}, call)
