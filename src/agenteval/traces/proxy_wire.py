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
from datetime import UTC, datetime
from typing import Any

from agenteval.cases.tooldefs import normalize_tool_def
from agenteval.traces.proxy_records import ModelCall, RequestedCall, ToolOutput

__all__ = ["READ_MAX", "ResponseReader", "read_request"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
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
    """Reads a response as its bytes pass (:meth:`feed`), then fills a call (:meth:`finish`).

    A stream is read line by line and each event folded into what the call records as it
    completes (:class:`_StreamFold`), so memory holds one pending event (at most
    :data:`READ_MAX` bytes) and the calls requested, never every event: a gzip stream
    inflating to millions of events costs no more than one."""

    def __init__(self, api: str, content_type: str, encoding: str) -> None:
        self.api = api
        self.sse = content_type.split(";")[0].strip().lower() == "text/event-stream"
        self._buf = bytearray()  # a JSON body; or, in a stream, the line not ended yet
        self._data: list[bytes] = []  # the data lines of the stream event under way
        self._data_size = 0
        self._fold = _StreamFold(api)
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
        if self._inflate is None:
            self._take(chunk)
            return
        piece = 1 << 20 if self.sse else READ_MAX + 1 - len(self._buf)
        try:
            while chunk and self.problem is None:
                out = self._inflate.decompress(chunk, max(1, piece))
                chunk = self._inflate.unconsumed_tail
                self._take(out)
                if not self.sse and chunk:  # a body over the bound: not read
                    self._over()
        except zlib.error as e:
            self.problem = f"body does not decode: {e}"

    def _over(self) -> None:
        self.problem = f"over {READ_MAX >> 20} MiB decoded, not read"
        self._buf = bytearray()
        self._data = []

    def _take(self, data: bytes) -> None:
        if not self.sse:
            if len(self._buf) + len(data) > READ_MAX:
                self._over()
                return
            self._buf += data
            return
        pos = 0
        while self.problem is None:
            nl = data.find(b"\n", pos)
            if nl < 0:
                self._buf += data[pos:]
                if len(self._buf) + self._data_size > READ_MAX:
                    self._over()
                return
            if self._buf:
                self._buf += data[pos:nl]
                line = bytes(self._buf)
                self._buf = bytearray()
            else:
                line = data[pos:nl]
            pos = nl + 1
            self._line(line[:-1] if line.endswith(b"\r") else line)

    def _line(self, line: bytes) -> None:
        if not line:
            self._dispatch()
        elif line.startswith(b"data:"):
            self._data.append(line[5:].lstrip())
            self._data_size += len(line)
            if self._data_size > READ_MAX:
                self._over()

    def _dispatch(self) -> None:
        if not self._data:
            return
        payload = b"\n".join(self._data)
        self._data = []
        self._data_size = 0
        if payload.strip() == b"[DONE]":
            return
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError):
            self.problem = self.problem or f"stream event is not JSON: {_short(payload)}"
            return
        self._fold.add(event)

    def finish(self, call: ModelCall) -> None:
        """Put what the body said into ``call`` (``unparsed`` when it could not be read)."""
        if self.api == "other" or self.problem is not None:
            call.unparsed = self.problem if self.api != "other" else None
            return
        if self.sse:
            if self._buf:
                line = bytes(self._buf)
                self._buf = bytearray()
                self._line(line[:-1] if line.endswith(b"\r") else line)
            self._dispatch()
            if self.problem is None:
                self._fold.apply(call)
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


class _StreamFold:
    """A stream's events folded one at a time into what the call records: for chat, the
    model, the last usage and the tool calls assembled from their deltas; for Responses,
    the final response and the function calls done (nothing else is kept)."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.scratch = ModelCall(api=api, path="", started_at=_EPOCH)
        self.calls: dict[tuple[int, int], RequestedCall] = {}
        self.final: dict[str, Any] | None = None
        self.items: list[dict[str, Any]] = []

    def add(self, ev: Any) -> None:
        if not isinstance(ev, dict):
            return
        if self.api == "chat":
            _chat_event(ev, self.scratch, self.calls)
        elif isinstance(ev.get("response"), dict) and ev.get("type") in (
            "response.completed",
            "response.incomplete",
            "response.failed",
        ):
            self.final = ev["response"]
        elif ev.get("type") == "response.output_item.done":
            item = ev.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call":
                self.items.append(item)

    def apply(self, call: ModelCall) -> None:
        if self.api != "chat":
            _responses_body(self.final if self.final is not None else {"output": self.items}, call)
            return
        s = self.scratch
        if s.model is not None:
            call.model = s.model
        if s.input_tokens is not None or s.output_tokens is not None or s.details:
            call.input_tokens, call.output_tokens = s.input_tokens, s.output_tokens
            call.details.update(s.details)
        call.requested.extend(c for _, c in sorted(self.calls.items()) if c.name)


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


def _chat_event(
    ev: dict[str, Any], call: ModelCall, calls: dict[tuple[int, int], RequestedCall]
) -> None:
    """One chat stream chunk: its model, usage and tool-call deltas."""
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
