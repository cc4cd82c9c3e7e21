"""Trial: one attempt of the agent at one case — observations only (SPEC §2.2).

A trial records what the agent did, never what we think of it. Scores live beside it in a
run (see :mod:`agenteval.rundir`) and can always be recomputed from it.

Trial files produced outside agenteval need only ``case_id``; every other field has a
default (``repeat`` 0, no tool calls, unknown latency and usage). A tool call needs only
``name`` and ``arguments``; ``arguments`` given as a string holding a JSON value is parsed,
and a string that is not valid JSON is kept as the raw string (that is how an agent's
malformed arguments are recorded).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agenteval.cases.tooldefs import tool_list_field

RETRY_REASONS = ("rate_limit", "server_error", "timeout", "connection")
"""Reasons a request is retried. Others may appear for custom agents."""

FAILURE_CAUSES = (
    "timeout",
    "rate_limited",
    "server_error",
    "connection",
    "http_error",
    "malformed_response",
    "agent_error",
    "cancelled",
    "retries_exhausted",
    "max_turns",
)
"""Causes a trial can fail with. A failed trial is kept in the run with its cause."""


class ToolCall(BaseModel):
    """One call the agent made to a tool, in the order it was made."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    id: str | None = Field(default=None, description="The call id given by the model, if any.")
    name: str = Field(description="The tool's name, as the agent called it.")
    arguments: Any = Field(
        default_factory=dict,
        description="Parsed arguments (usually an object), or the raw string when not valid JSON.",
    )
    result: Any = Field(default=None, description="What the tool returned (text or JSON).")
    error: str | None = Field(default=None, description="The error the call raised, if any.")
    started_at: datetime | None = Field(default=None, description="When the call started.")
    duration_s: float | None = Field(default=None, ge=0, description="How long it took.")

    @model_validator(mode="before")
    @classmethod
    def _provider_forms(cls, data: Any) -> Any:
        """Accept the shapes providers and frameworks log tool calls in.

        - OpenAI: ``{"id", "type": "function", "function": {"name", "arguments"}}``;
        - Anthropic ``tool_use`` blocks: ``{"id", "name", "input"}``;
        - LangChain: ``{"id", "name", "args"}``.
        """
        if not isinstance(data, dict):
            return data
        fn = data.get("function")
        if "name" not in data and isinstance(fn, dict):
            flat = {k: v for k, v in data.items() if k not in ("function", "type")}
            flat["name"] = fn.get("name")
            if "arguments" in fn:
                flat["arguments"] = fn["arguments"]
            return flat
        if "arguments" not in data:
            for alias in ("input", "args"):
                if alias in data:
                    flat = dict(data)
                    flat["arguments"] = flat.pop(alias)
                    return flat
        return data

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse_arguments(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return json.loads(v)
            except (ValueError, RecursionError):  # nested too deeply is not valid JSON either
                return v
        return v

    @property
    def arguments_valid_json(self) -> bool:
        """False when the agent produced arguments that were not valid JSON."""
        return not isinstance(self.arguments, str)


class Usage(BaseModel):
    """Tokens used by one model during a trial (or a judgment)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    model: str | None = Field(default=None, description="Model name; None when unknown.")
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _openai_names(cls, data: Any) -> Any:
        """Accept OpenAI's ``prompt_tokens`` / ``completion_tokens`` names."""
        if isinstance(data, dict) and ("prompt_tokens" in data or "completion_tokens" in data):
            data = dict(data)
            data.setdefault("input_tokens", data.pop("prompt_tokens", 0))
            data.setdefault("output_tokens", data.pop("completion_tokens", 0))
        return data


class Latency(BaseModel):
    """Time the trial took. None means unknown (e.g. a trial file from elsewhere)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    total_s: float | None = Field(
        default=None, ge=0, description="What a user waits: wall clock, retries and waits included."
    )
    active_s: float | None = Field(
        default=None, ge=0, description="Time spent inside requests only."
    )


class Retry(BaseModel):
    """One retried request: why, and how long we waited before trying again."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    reason: str = Field(description="rate_limit, server_error, timeout, connection, ...")
    wait_s: float = Field(ge=0, description="Back-off before the next attempt.")
    detail: str | None = Field(default=None, description="E.g. the HTTP status or error text.")


class CachedCall(BaseModel):
    """A model call served from the replay cache (docs/cache.md): nothing was sent and
    nothing paid for it in this trial. Its tokens are still in the trial's ``usage`` (what
    the agent consumed, replayed as recorded); reports price them apart as *cached*."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    model: str | None = Field(default=None, description="Model name; None when unknown.")
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    latency_s: float | None = Field(
        default=None, ge=0, description="How long the call took when it was made and stored."
    )


class Failure(BaseModel):
    """Why a trial did not end with an answer."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    cause: str = Field(description="One of FAILURE_CAUSES (or a custom cause).")
    message: str = Field(default="", description="What happened, secrets removed.")


class Trial(BaseModel):
    """One attempt of the agent at one case."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    case_id: str = Field(description="The id of the case this trial attempts.")
    repeat: int = Field(default=0, ge=0, description="0-based index among repeats of a case.")
    output: str | None = Field(
        default=None, description="Final answer text; None when the agent never answered."
    )
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: list[Usage] = Field(default_factory=list, description="Tokens per model used.")
    latency: Latency = Field(default_factory=Latency)
    retries: list[Retry] = Field(default_factory=list)
    failure: Failure | None = Field(default=None)
    started_at: datetime | None = Field(default=None)
    tools: list[dict[str, Any]] | None = Field(
        default=None,
        description="Tool definitions the agent was offered, when known (override the case's).",
    )
    messages: list[dict[str, Any]] | None = Field(
        default=None, description="The transcript, when the adapter records one."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    cached: list[CachedCall] = Field(
        default_factory=list,
        exclude_if=lambda v: not v,  # absent from the stored trial when no call was cached
        description="The model calls served from the replay cache (docs/cache.md).",
    )

    @field_validator("case_id", mode="before")
    @classmethod
    def _case_id(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if not isinstance(v, str):
            raise ValueError("must be a string")
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("usage", mode="before")
    @classmethod
    def _usage(cls, v: Any) -> Any:
        if v is None:
            return []
        return [v] if isinstance(v, dict) else v

    @field_validator("latency", mode="before")
    @classmethod
    def _latency(cls, v: Any) -> Any:
        if v is None:
            return {}
        if isinstance(v, int | float) and not isinstance(v, bool):
            return {"total_s": v}
        return v

    @field_validator("tool_calls", "retries", "cached", mode="before")
    @classmethod
    def _none_is_empty(cls, v: Any) -> Any:
        return [] if v is None else v

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, v: Any) -> Any:
        return {} if v is None else v

    @field_validator("tools", mode="before")
    @classmethod
    def _tools(cls, v: Any) -> Any:
        return tool_list_field(v)

    @property
    def responded(self) -> bool:
        """True when the agent produced an answer (output is not None)."""
        return self.output is not None

    @property
    def key(self) -> tuple[str, int]:
        """(case_id, repeat): what identifies a trial within a run."""
        return (self.case_id, self.repeat)
