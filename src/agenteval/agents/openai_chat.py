"""OpenAI-compatible chat endpoints (vLLM, llama.cpp, Ollama, OpenAI, Azure, gateways).

:func:`chat_completion` is the one request/response step, shared by the black-box agent
below, the built-in tool loop and the LLM judge. :class:`OpenAIChatAgent` treats the
endpoint as a black box: the case rendered as messages goes in (with the case's tools
offered when it has any), the final assistant message comes out. Tool calls the model
makes in that response, and tool calls already present in the input conversation (with
their results, matched by ``tool_call_id``), are recorded as :class:`ToolCall` s. Its
requests carry the trial's W3C ``traceparent`` (:mod:`agenteval.llm.propagation`; the
trial records ``metadata.trace_id``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from agenteval._util.secrets import Redactor, redact_mapping, redact_url, url_secrets
from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.cases.prompt import build_messages
from agenteval.cases.tooldefs import as_openai_tools, normalize_tool_defs
from agenteval.llm.http import HttpClient, RetryPolicy
from agenteval.llm.propagation import TraceContext
from agenteval.llm.replay import ReplayCache
from agenteval.trials.trial import ToolCall


@dataclass(slots=True)
class ChatResult:
    """One assistant turn.

    ``content`` is the message text (text parts of a list content joined; ``None`` when
    absent); ``tool_calls`` the calls requested, arguments parsed from JSON or kept as the
    raw string when invalid; ``message`` the raw assistant message; ``usage`` is
    ``(prompt_tokens, completion_tokens)`` or ``None`` when the response had none.
    """

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    message: dict[str, Any] = field(default_factory=dict)
    usage: tuple[int, int] | None = None


def chat_url(base_url: str) -> str:
    """``{base_url}/chat/completions`` (``base_url`` as OpenAI clients take it, e.g. ``.../v1``).

    A query string in ``base_url`` (``...?api-version=...``) stays after the new path.
    """
    head, qmark, query = base_url.partition("?")
    return head.rstrip("/") + "/chat/completions" + qmark + query


async def chat_completion(
    client: HttpClient,
    base_url: str,
    model: str,
    messages: list[dict[str, Any]],
    rec: Recorder,
    *,
    tools: list[dict[str, Any]] | None = None,
    **params: Any,
) -> ChatResult:
    """Request one chat completion and parse the first choice.

    ``tools`` are tool definitions in OpenAI or bare form (sent in OpenAI form; omitted when
    empty); ``params`` (temperature, max_tokens...) go into the request body as is. Token
    usage is added to ``rec`` under ``model`` (the requested name, so price tables match)
    even when the rest of the response is unusable. With the client's replay cache
    (:mod:`agenteval.llm.replay`) a cached response is used as is and recorded on
    ``rec.cached``. Raises ``AgentFailure`` as
    :meth:`HttpClient.post_json` does, and ``malformed_response`` when the response lacks
    ``choices[0].message`` or a tool call lacks a function name.
    """
    body: dict[str, Any] = {"model": model, "messages": messages, **params}
    if tools:
        body["tools"] = as_openai_tools(normalize_tool_defs(tools))
    data, replayed = await client.post_json_cached(chat_url(base_url), body, rec)
    if not isinstance(data, dict):
        raise AgentFailure("malformed_response", "response is not a JSON object")
    usage = _record_usage(data.get("usage"), model, rec)
    if replayed is not None:  # served from the replay cache: nothing sent, nothing paid
        rec.add_cached(model, *(usage or (0, 0)), replayed.latency_s)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise AgentFailure("malformed_response", "response has no 'choices'")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise AgentFailure("malformed_response", "response has no 'choices.0.message'")
    finish = choices[0].get("finish_reason")
    return ChatResult(
        content=_content_text(message.get("content")),
        tool_calls=parse_tool_calls(message),
        finish_reason=finish if isinstance(finish, str) else None,
        message=message,
        usage=usage,
    )


def _record_usage(raw: Any, model: str, rec: Recorder) -> tuple[int, int] | None:
    if not isinstance(raw, dict):
        return None
    pin, pout = raw.get("prompt_tokens"), raw.get("completion_tokens")
    tin = pin if isinstance(pin, int) and not isinstance(pin, bool) and pin >= 0 else 0
    tout = pout if isinstance(pout, int) and not isinstance(pout, bool) and pout >= 0 else 0
    rec.add_usage(model, tin, tout)
    return (tin, tout)


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return str(content)


def parse_tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    """The tool calls of an assistant message (``tool_calls``, or legacy ``function_call``).

    Arguments are parsed from JSON; a string that is not valid JSON is kept as is. Raises
    ``AgentFailure("malformed_response")`` for a call without a function name.
    """
    raw_calls = message.get("tool_calls")
    if not raw_calls and isinstance(message.get("function_call"), dict):
        raw_calls = [{"function": message["function_call"]}]
    if not isinstance(raw_calls, list):
        return []
    calls: list[ToolCall] = []
    for i, raw in enumerate(raw_calls):
        fn = raw.get("function") if isinstance(raw, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(fn, dict) or not isinstance(name, str) or not name:
            raise AgentFailure("malformed_response", f"tool call {i} has no function name")
        args = fn.get("arguments", {})
        call_id = raw.get("id") if isinstance(raw, dict) else None
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else None,
                name=name,
                arguments=args if args is not None else {},
            )
        )
    return calls


def conversation_tool_calls(messages: list[dict[str, Any]]) -> list[ToolCall]:
    """Tool calls already made in a conversation, with results from ``tool`` messages.

    A ``tool`` message is matched to its call by ``tool_call_id``; calls without a result
    keep ``result`` ``None``. Malformed calls in the input are skipped.
    """
    calls: list[ToolCall] = []
    by_id: dict[str, ToolCall] = {}
    for m in messages:
        if m.get("role") == "assistant":
            try:
                found = parse_tool_calls(m)
            except AgentFailure:
                continue
            calls.extend(found)
            by_id.update({c.id: c for c in found if c.id})
        elif m.get("role") == "tool":
            call = by_id.get(str(m.get("tool_call_id")))
            if call is not None:
                call.result = m.get("content")
    return calls


class OpenAIChatAgent:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint, as a black box.

    Messages come from :func:`agenteval.cases.prompt.build_messages` (``prompt_template``
    applies); ``params`` are extra request fields (temperature, max_tokens...). The output
    is the final assistant content, ``""`` when the model answered only with tool calls.
    ``api_key`` is sent as ``Authorization: Bearer ...`` and never appears in messages or
    :meth:`describe`; nor do credentials in ``base_url`` (user info, secret query values).
    ``cache``: the replay cache for its model calls (docs/cache.md).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        prompt_template: str | None = None,
        policy: RetryPolicy | None = None,
        limit: int = 100,
        params: dict[str, Any] | None = None,
        rng: random.Random | None = None,
        cache: ReplayCache | None = None,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.prompt_template = prompt_template
        self.params = dict(params or {})
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        secrets = [api_key] if api_key else []
        secrets += url_secrets(base_url)
        self.client = HttpClient(
            policy, limit=limit, headers=headers, secrets=secrets, rng=rng, cache=cache
        )
        self._redactor = Redactor(secrets)

    def use_cache(self, cache: ReplayCache | None) -> bool:
        """Serve its model calls from ``cache`` (docs/cache.md); True: it applies here."""
        self.client.cache = cache
        return True

    def describe(self) -> dict[str, Any]:
        """``{kind: "openai_chat", base_url, model, params[, prompt_template]}``, no secret."""
        desc: dict[str, Any] = {
            "kind": "openai_chat",
            "base_url": redact_url(self.base_url),
            "model": self.model,
            "params": self.params,
        }
        if self.prompt_template is not None:
            desc["prompt_template"] = self.prompt_template
        return redact_mapping(desc, self._redactor)

    async def start(self) -> None:
        """Open the HTTP session."""
        await self.client.start()

    async def close(self) -> None:
        """Close the HTTP session."""
        await self.client.close()

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Send the case once; record tool calls from the input and the response."""
        messages = build_messages(case, self.prompt_template)
        trace = rec.trace = rec.trace or TraceContext.new()  # traceparent: one per trial
        result = await chat_completion(
            self.client, self.base_url, self.model, messages, rec, tools=case.tools, **self.params
        )
        calls = conversation_tool_calls(messages) + result.tool_calls
        return AgentOutput(
            output=result.content if result.content is not None else "",
            tool_calls=calls,
            tools=case.tools,
            messages=[*messages, result.message],
            metadata={
                **({"finish_reason": result.finish_reason} if result.finish_reason else {}),
                "trace_id": trace.trace_id,
            },
        )
