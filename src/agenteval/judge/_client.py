"""One chat-completion request to the judge model, read into a :class:`JudgeReply`.

The request is :func:`agenteval.agents.openai_chat.chat_completion`, the same step agents
use, so it is retried, classified and usage-accounted exactly like an agent's: retries and
token usage land on the :class:`~agenteval.agents.base.Recorder` passed in (usage even when
the response is otherwise unusable), failures raise
:class:`~agenteval.agents.base.AgentFailure`. The reply's text is ``message.content``;
``message.refusal`` (the OpenAI refusal field) and a ``content_filter`` finish reason are
reported as a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agenteval.agents.openai_chat import chat_completion
from agenteval.llm.http import HttpClient
from agenteval.llm.recorder import Recorder

_FILTERED = "the reply was stopped by the server's content filter"


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """What the judge answered (``finish_reason``: the API's, ``"length"`` when cut off)."""

    content: str | None
    refusal: str | None
    finish_reason: str | None = None


async def request_verdict(
    client: HttpClient,
    base_url: str,
    model: str,
    messages: list[dict[str, Any]],
    rec: Recorder,
    params: dict[str, Any],
) -> JudgeReply:
    """Ask the judge once (``params``: temperature, response_format...); see the module doc."""
    result = await chat_completion(client, base_url, model, messages, rec, **params)
    refusal = result.message.get("refusal")
    if not (isinstance(refusal, str) and refusal.strip()):
        refusal = _FILTERED if result.finish_reason == "content_filter" else None
    return JudgeReply(content=result.content, refusal=refusal, finish_reason=result.finish_reason)
