"""The built-in tool-calling agent: a model behind an OpenAI-compatible endpoint, plus tools.

agenteval runs the loop itself, so it sees every call. One *turn* is one chat completion
request. For each turn:

1. the transcript so far goes to the model, with the tool definitions;
2. if the reply asks for tools, each call is executed **in the order given** (parallel
   calls of one reply run one after another), recorded on the trial as it finishes
   (``Recorder.tool_calls``, so a trial that times out keeps them) and its result, or its
   error, is appended to the transcript for the model to see;
3. a reply without tool calls is the final answer.

Bad calls are not the loop's failures: arguments that are not valid JSON (recorded as the
raw string), an unknown tool name, arguments that fail the tool's schema, and a tool
that raised are all fed back to the model as the tool's error and recorded with it — what
real agents do. The trial fails with cause ``max_turns`` when the model still asks for
tools after ``max_turns`` turns; the calls made so far stay on the trial. With
``answer_on_last_turn`` the last turn asks for an answer instead (``tool_choice: "none"``
in native format, the answer-only schema in json format), so a trial ends with the
model's best answer rather than a ``max_turns`` failure.

Two ways to ask for tools (``tool_format``):

- ``"native"`` (default): OpenAI ``tools`` in the request, ``tool_calls`` in the reply and
  ``tool`` messages with the results. Needs a server and chat template that support tools.
- ``"json"``: for models whose chat template cannot express tools. The tools are described
  in a system message and every reply is constrained with ``response_format`` (a JSON
  Schema; llama.cpp, vLLM and Ollama turn it into a grammar) to either
  ``{"tool": NAME, "arguments": {...}}`` or ``{"answer": TEXT}``. Results come back as user
  messages ``Result of NAME: ...``. A reply that is not such JSON is answered with a
  reminder of the format and costs a turn.

The trial stores the transcript (``messages``) and the tool definitions offered
(``tools``), so ``tool_arguments_valid`` checks calls against exactly those.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from agenteval._util.secrets import Redactor, redact_mapping, redact_url, url_secrets
from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.agents.json_tools import (
    JSON_INSTRUCTIONS,
    JSON_REMINDER,
    json_reply_schema,
    parse_json_reply,
    tool_listing,
)
from agenteval.agents.mcp_tools import McpServer
from agenteval.agents.openai_chat import chat_completion
from agenteval.agents.tool_formats import TOOL_FORMATS
from agenteval.agents.toolset import ToolSet, result_text
from agenteval.cases.case import Case
from agenteval.cases.prompt import build_messages
from agenteval.errors import FieldName, InputError
from agenteval.llm.http import HttpClient, RetryPolicy
from agenteval.llm.replay import ReplayCache
from agenteval.trials.trial import ToolCall

ToolFormat = Literal["native", "json"]


class ToolLoopAgent:
    """A model plus a :class:`ToolSet`, looped by agenteval (see the module docstring).

    ``params`` are extra request fields (temperature, max_tokens...); ``prompt_template``
    renders the user message as for :class:`~agenteval.agents.openai_chat.OpenAIChatAgent`;
    ``system_prompt`` is put first unless the case's conversation starts with a system
    message. ``api_key`` is sent as a bearer token and never written anywhere. ``cache``:
    the replay cache for its model calls (docs/cache.md); tools always run.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        toolset: ToolSet,
        *,
        api_key: str | None = None,
        max_turns: int = 10,
        policy: RetryPolicy | None = None,
        limit: int = 100,
        params: dict[str, Any] | None = None,
        prompt_template: str | None = None,
        system_prompt: str | None = None,
        tool_format: ToolFormat = "native",
        answer_on_last_turn: bool = False,
        rng: random.Random | None = None,
        cache: ReplayCache | None = None,
    ) -> None:
        if max_turns < 1:
            raise InputError((FieldName("max_turns"), f" must be >= 1, got {max_turns}"))
        if tool_format not in TOOL_FORMATS:
            raise InputError(f"tool format must be one of {', '.join(TOOL_FORMATS)}")
        self.base_url = base_url
        self.model = model
        self.toolset = toolset
        self.max_turns = max_turns
        self.params = dict(params or {})
        self.prompt_template = prompt_template
        self.system_prompt = system_prompt
        self.tool_format: ToolFormat = tool_format
        self.answer_on_last_turn = answer_on_last_turn
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        secrets = [api_key] if api_key else []
        secrets += url_secrets(base_url)
        self.client = HttpClient(
            policy, limit=limit, headers=headers, secrets=secrets, rng=rng, cache=cache
        )
        self._redactor = Redactor(secrets)
        self._defs: list[dict[str, Any]] = []

    def use_cache(self, cache: ReplayCache | None) -> bool:
        """Serve its model calls from ``cache`` (docs/cache.md); True: it applies here."""
        self.client.cache = cache
        return True

    def describe(self) -> dict[str, Any]:
        """``{kind: "tool_loop", base_url, model, params, max_turns, tool_format, tools}``
        (``tools``: the names known before start; MCP servers are listed under ``mcp``)."""
        desc: dict[str, Any] = {
            "kind": "tool_loop",
            "base_url": redact_url(self.base_url),
            "model": self.model,
            "params": self.params,
            "max_turns": self.max_turns,
            "tool_format": self.tool_format,
            "answer_on_last_turn": self.answer_on_last_turn,
            "tools": self.toolset.names(),
        }
        servers = [p.describe() for p in self.toolset.providers if isinstance(p, McpServer)]
        if servers:
            desc["mcp"] = servers
        if self.prompt_template is not None:
            desc["prompt_template"] = self.prompt_template
        if self.system_prompt is not None:
            desc["system_prompt"] = self.system_prompt
        return redact_mapping(desc, self._redactor)

    async def start(self) -> None:
        """Connect the tools (MCP servers) and open the HTTP session; when a tool server
        cannot start, nothing is left open."""
        await self.toolset.start()
        await self.client.start()
        self._defs = self.toolset.definitions()

    async def close(self) -> None:
        """Disconnect the tools and close the HTTP session."""
        try:
            await self.toolset.close()
        finally:
            await self.client.close()

    def _first_messages(self, case: Case) -> list[dict[str, Any]]:
        messages = build_messages(case, self.prompt_template)
        system = self.system_prompt
        if self.tool_format == "json":
            listing = JSON_INSTRUCTIONS.format(tools=tool_listing(self._defs))
            system = f"{system}\n\n{listing}" if system else listing
        if system is None:
            return messages
        if messages and messages[0].get("role") == "system":
            first = dict(messages[0])
            if self.tool_format == "json" and isinstance(first.get("content"), str):
                first["content"] = f"{first['content']}\n\n{system}"
            return [first, *messages[1:]]
        return [{"role": "system", "content": system}, *messages]

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Loop until the model answers without tool calls, or fail with ``max_turns``."""
        if not self._defs and self.toolset.names():
            self._defs = self.toolset.definitions()
        messages = self._first_messages(case)
        rec.messages = messages  # the live transcript: kept as is if the trial fails
        for turn in range(self.max_turns):
            last = self.answer_on_last_turn and turn == self.max_turns - 1
            if self.tool_format == "json":
                answer = await self._json_turn(messages, rec, turn, last)
            else:
                answer = await self._native_turn(messages, rec, turn, last)
            if answer is not None:
                return AgentOutput(output=answer, tools=self._defs, messages=messages)
        raise AgentFailure(
            "max_turns",
            f"no final answer after {self.max_turns} model turns (--max-turns"
            f" {self.max_turns}); {len(rec.tool_calls)} tool call(s) recorded",
        )

    async def _native_turn(
        self, messages: list[dict[str, Any]], rec: Recorder, turn: int, last: bool
    ) -> str | None:
        params = {**self.params, "tool_choice": "none"} if last and self._defs else self.params
        result = await chat_completion(
            self.client, self.base_url, self.model, messages, rec, tools=self._defs, **params
        )
        message = dict(result.message)
        if not result.tool_calls:
            messages.append(message)
            return result.content if result.content is not None else ""
        calls = [
            c if c.id else c.model_copy(update={"id": f"call_{turn}_{i}"})
            for i, c in enumerate(result.tool_calls)
        ]
        raw_calls = message.get("tool_calls")
        if isinstance(raw_calls, list) and len(raw_calls) == len(calls):
            message["tool_calls"] = [
                {**raw, "id": call.id} if isinstance(raw, dict) else raw
                for raw, call in zip(raw_calls, calls, strict=True)
            ]
        messages.append(message)
        for call in calls:
            done = await self._execute(call, rec)
            messages.append({"role": "tool", "tool_call_id": done.id, "content": result_text(done)})
        return None

    async def _json_turn(
        self, messages: list[dict[str, Any]], rec: Recorder, turn: int, last: bool
    ) -> str | None:
        schema = json_reply_schema([] if last else self._defs)
        params = {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "agent_step", "schema": schema},
            },
            **self.params,
        }
        result = await chat_completion(
            self.client, self.base_url, self.model, messages, rec, **params
        )
        messages.append({"role": "assistant", "content": result.content or ""})
        parsed = parse_json_reply(result.content)
        if parsed is None:
            messages.append({"role": "user", "content": JSON_REMINDER})
            return None
        kind, value, arguments = parsed
        if kind == "answer":
            return str(value)
        call = ToolCall(id=f"call_{turn}_0", name=str(value), arguments=arguments)
        done = await self._execute(call, rec)
        messages.append({"role": "user", "content": f"Result of {done.name}: {result_text(done)}"})
        return None

    async def _execute(self, call: ToolCall, rec: Recorder) -> ToolCall:
        done = await self.toolset.run_call(call)
        rec.tool_calls.append(done)
        return done


def build_toolset(modules: list[str], mcp_commands: list[str], mcp_urls: list[str]) -> ToolSet:
    """A tool set from ``--tools`` modules and ``--mcp`` / ``--mcp-url`` servers."""
    toolset = ToolSet()
    for name in modules:
        toolset.extend(ToolSet.from_module(name))
    for command in mcp_commands:
        toolset.add_provider(McpServer(command=command))
    for url in mcp_urls:
        toolset.add_provider(McpServer(url=url))
    return toolset
