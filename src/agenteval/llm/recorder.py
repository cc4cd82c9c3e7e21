"""What the layers below an agent adapter report while one trial runs: the :class:`Recorder`
(retries, time inside requests, token usage, tool calls, as they happen) and the one
exception for a known failure cause, :class:`AgentFailure`.

Both live here, below the agent adapters, so that the HTTP transport, the judge and the
simulated users record into them without importing :mod:`agenteval.agents`;
:mod:`agenteval.agents.base` re-exports them, the documented place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agenteval.llm.propagation import TraceContext
from agenteval.trials.trial import CachedCall, Retry, ToolCall, Usage

__all__ = ["AgentFailure", "Recorder"]


class AgentFailure(Exception):
    """The agent did not answer, for a known cause (timeout, rate_limited, http_error...)."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message


@dataclass(slots=True)
class Recorder:
    """Observations collected while one trial runs (filled by adapters and the HTTP layer)."""

    retries: list[Retry] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    messages: list[dict[str, Any]] | None = None
    active_s: float = 0.0
    trace: TraceContext | None = None
    """The trial's W3C trace context; when set, HTTP requests carry its ``traceparent``."""
    cached: list[CachedCall] = field(default_factory=list)
    """The model calls served from the replay cache (:mod:`agenteval.llm.replay`)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """What a trial that fails keeps as its ``metadata`` (an answered trial records its
    :attr:`AgentOutput.metadata` instead): e.g. a conversation's turns so far."""

    def add_cached(
        self, model: str | None, input_tokens: int, output_tokens: int, latency_s: float | None
    ) -> None:
        """Record one model call served from the cache (its tokens go to :attr:`usage` too,
        through :meth:`add_usage`, as the adapter reads them from the replayed response)."""
        self.cached.append(
            CachedCall(
                model=model,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                latency_s=latency_s,
            )
        )

    def add_usage(self, model: str | None, input_tokens: int, output_tokens: int) -> None:
        """Add tokens for a model, merging with what that model already used."""
        for u in self.usage:
            if u.model == model:
                u.input_tokens += input_tokens
                u.output_tokens += output_tokens
                return
        self.usage.append(
            Usage(model=model, input_tokens=input_tokens, output_tokens=output_tokens)
        )
