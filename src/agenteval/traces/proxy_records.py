"""What the recording proxy saw of one model call, and the trajectory many calls make.

Pure: no sockets. :mod:`agenteval.traces.proxy` feeds it the bytes it forwards.

Per call (:class:`ModelCall`), from the **request** body (JSON; anything else is left
unread): the requested ``model``, whether it asked to ``stream``, the tool definitions
offered (``tools``) and the tool outputs the agent sends back — chat completions
``{"role": "tool", "tool_call_id", "content"}`` messages, Responses API
``{"type": "function_call_output", "call_id", "output"}`` items. From the **response**
(a JSON body, or a ``text/event-stream`` read event by event; gzip and deflate are
decoded for reading only): the model that answered, token usage (chat: ``usage``, in a
stream the final chunk's, present only when the agent asked for it with
``stream_options.include_usage``; Responses: the ``usage`` of the final response, in a
stream the ``response.completed`` event's), cached and reasoning token counts, and the
tool calls the model requested (chat ``tool_calls``, assembled from the deltas of a
stream; Responses ``function_call`` items). A response that cannot be read (not JSON, a
broken event, an unknown encoding) is still forwarded unchanged; the call is recorded
with ``unparsed`` saying why.

**Errors.** The model APIs have no error flag on a tool output: the proxy sees text. A
tool output is recorded as the call's ``error`` (and no ``result``) when its text starts
with ``Error:`` or ``error:`` (what LangGraph's ``ToolNode`` sends, and the convention
to use in your own loop) or with ``An error occurred while running the tool`` (the
OpenAI Agents SDK's default); any other output is the call's ``result``, kept as text.
A tool result that happens to start with ``Error:`` is recorded as an error.

:func:`trajectory_from_calls` turns one trial's calls into a
:class:`~agenteval.traces.records.Trajectory` (rules in its docstring).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agenteval.errors import InputError
from agenteval.tooldefs import normalize_tool_def
from agenteval.traces.records import Trajectory
from agenteval.trial import ToolCall, Usage

__all__ = [
    "ModelCall",
    "ResponseReader",
    "is_error_text",
    "read_recording",
    "read_request",
    "trajectory_from_calls",
]

_ERROR_TEXT = re.compile(r"(?:[Ee]rror:|An error occurred while running the tool)")


def is_error_text(content: Any) -> bool:
    """True when a tool output's text marks an error (module docstring)."""
    return isinstance(content, str) and _ERROR_TEXT.match(content.lstrip()) is not None


@dataclass(slots=True)
class RequestedCall:
    """A tool call the model asked for: ``arguments`` as the raw JSON text it sent."""

    id: str | None
    name: str
    arguments: str = ""


@dataclass(slots=True)
class ToolOutput:
    """What the agent sent back for one call."""

    call_id: str | None
    content: Any


@dataclass(slots=True)
class ModelCall:
    """One request through the proxy (module docstring). Times: ``started_at`` (wall
    clock) and ``latency_s`` (until the last response byte; None while in flight)."""

    api: str  # "chat", "responses" or "other"
    path: str
    started_at: datetime
    label: str = ""
    status: int | None = None
    latency_s: float | None = None
    stream: bool = False
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    details: dict[str, int] = field(default_factory=dict)
    requested: list[RequestedCall] = field(default_factory=list)
    outputs: list[ToolOutput] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    unparsed: str | None = None
    error: str | None = None

    @property
    def ended_at(self) -> datetime | None:
        """When the last response byte arrived."""
        if self.latency_s is None:
            return None
        return self.started_at + timedelta(seconds=self.latency_s)

    def summary(self) -> dict[str, Any]:
        """The short form kept on a trial (``metadata.model_calls``): no message content."""
        out: dict[str, Any] = {"api": self.api, "model": self.model, "status": self.status}
        out["stream"] = self.stream
        out["latency_s"] = None if self.latency_s is None else round(self.latency_s, 6)
        if self.input_tokens is not None or self.output_tokens is not None:
            out["input_tokens"] = self.input_tokens or 0
            out["output_tokens"] = self.output_tokens or 0
        out["tool_calls"] = [c.name for c in self.requested]
        for key in ("unparsed", "error"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    def to_json(self) -> dict[str, Any]:
        """Everything, as one line of ``agenteval proxy --out`` (read back by
        :meth:`from_json`)."""
        out = self.summary()
        out = {"label": self.label, "path": self.path, **out}
        out["started_at"] = self.started_at.isoformat()
        out["details"] = self.details
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.requested
        ]
        out["tool_outputs"] = [{"call_id": o.call_id, "content": o.content} for o in self.outputs]
        out["tools"] = self.tools
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelCall:
        """The call :meth:`to_json` wrote."""
        return cls(
            api=str(data.get("api", "other")),
            path=str(data.get("path", "")),
            started_at=datetime.fromisoformat(str(data["started_at"])),
            label=str(data.get("label", "")),
            status=data.get("status"),
            latency_s=data.get("latency_s"),
            stream=bool(data.get("stream")),
            model=data.get("model"),
            input_tokens=data.get("input_tokens"),
            output_tokens=data.get("output_tokens"),
            details=dict(data.get("details") or {}),
            requested=[RequestedCall(**c) for c in data.get("tool_calls") or []],
            outputs=[ToolOutput(**o) for o in data.get("tool_outputs") or []],
            tools=list(data.get("tools") or []),
            unparsed=data.get("unparsed"),
            error=data.get("error"),
        )


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
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    if isinstance(data.get("model"), str):
        call.model = data["model"]
    call.stream = data.get("stream") is True
    for raw in data.get("tools") or ():
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
        if self._inflate is not None:
            try:
                chunk = self._inflate.decompress(chunk)
            except zlib.error as e:
                self.problem = f"body does not decode: {e}"
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
            except ValueError:
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
            except ValueError:
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
    for choice in data.get("choices") or ():
        msg = choice.get("message") if isinstance(choice, dict) else None
        for tc in (msg.get("tool_calls") if isinstance(msg, dict) else None) or ():
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
        for choice in ev.get("choices") or ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            for tc in (delta.get("tool_calls") if isinstance(delta, dict) else None) or ():
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
    for item in data.get("output") or ():
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


def trajectory_from_calls(calls: Iterable[ModelCall]) -> Trajectory:
    """One trial's model calls → its trajectory.

    - ``tool_calls``: every call a model requested, in the order the responses arrived
      (a call id seen again is the same call); ``arguments`` parsed from the JSON text
      (kept as the text when invalid); ``result`` or ``error`` from the first tool output
      carrying its id in a later request (module docstring for which one it is); a call
      no request answered has neither. ``started_at`` is when the model's response ended
      and ``duration_s`` the time until the request bringing its output began (an upper
      bound on the tool's own time: it includes the agent's work in between).
    - ``usage``: tokens summed per model (the response's model, else the request's);
      ``token_details``: cached and reasoning tokens per model.
    - ``active_s``: the union of the calls' request-to-last-byte intervals.
    - ``tools``: the tool definitions the requests offered (first of a name wins).
    - ``metadata["model_calls"]``: :meth:`ModelCall.summary` of every call, in order.
    """
    ordered = sorted(calls, key=lambda c: c.started_at)
    t = Trajectory()
    found: dict[str, ToolCall] = {}
    ends: dict[int, datetime] = {}
    answered: set[int] = set()
    tool_names: set[str] = set()
    for mc in ordered:
        for out in mc.outputs:  # outputs first: a request answers calls made before it
            tc = found.get(out.call_id or "")
            if tc is None or id(tc) in answered:
                continue
            answered.add(id(tc))
            if is_error_text(out.content):
                tc.error = str(out.content)
            else:
                tc.result = out.content
            start = ends.get(id(tc))
            if start is not None and mc.started_at >= start:
                tc.duration_s = (mc.started_at - start).total_seconds()
        for d in mc.tools:
            if d["name"] not in tool_names:
                tool_names.add(d["name"])
                t.tools = [*(t.tools or []), d]
        for rc in mc.requested:
            if rc.id is not None and rc.id in found:
                continue
            tc = ToolCall.model_validate(
                {"id": rc.id, "name": rc.name, "arguments": rc.arguments or "{}"}
            )
            tc.started_at = mc.ended_at.astimezone(UTC) if mc.ended_at else None
            if mc.ended_at is not None:
                ends[id(tc)] = mc.ended_at
            t.tool_calls.append(tc)
            if rc.id is not None:
                found[rc.id] = tc
        _add_usage(t, mc)
    t.active_s = _union([(c.started_at, c.ended_at) for c in ordered if c.ended_at is not None])
    t.metadata["model_calls"] = [c.summary() for c in ordered if c.api != "other"]
    if not t.metadata["model_calls"]:
        del t.metadata["model_calls"]
    return t


def _add_usage(t: Trajectory, mc: ModelCall) -> None:
    if mc.input_tokens is None and mc.output_tokens is None:
        return
    model = mc.model
    for name, n in mc.details.items():
        d = t.token_details.setdefault(model or "", {})
        d[name] = d.get(name, 0) + n
    for u in t.usage:
        if u.model == model:
            u.input_tokens += mc.input_tokens or 0
            u.output_tokens += mc.output_tokens or 0
            return
    t.usage.append(
        Usage(model=model, input_tokens=mc.input_tokens or 0, output_tokens=mc.output_tokens or 0)
    )


def _union(spans: list[tuple[datetime, datetime | None]]) -> float | None:
    total = 0.0
    end: datetime | None = None
    for a, b in sorted((a, b) for a, b in spans if b is not None):
        if end is None or a > end:
            total += (b - a).total_seconds()
            end = b
        elif b > end:
            total += (b - end).total_seconds()
            end = b
    return total if spans else None


def read_recording(path: str | Path) -> dict[str, Trajectory]:
    """An ``agenteval proxy --out`` file → one trajectory per label
    (:func:`trajectory_from_calls`), labels in the order first seen. Raises InputError
    naming the file and line for a line that is not a recorded call."""
    groups: dict[str, list[ModelCall]] = {}
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InputError(f"cannot read the proxy recording: {e.strerror or e}", file=p) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            call = ModelCall.from_json(json.loads(line))
        except (ValueError, TypeError, KeyError) as e:
            raise InputError(f"not a recorded model call ({e})", file=p, line=n) from None
        groups.setdefault(call.label, []).append(call)
    return {label: trajectory_from_calls(calls) for label, calls in groups.items()}
