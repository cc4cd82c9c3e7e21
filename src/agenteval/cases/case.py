"""Case: one row of a dataset (SPEC §2.1).

A case says what is asked of the agent and what a good answer looks like. Fields that
agenteval does not know are kept in ``metadata`` rather than rejected, so that datasets
written for other tools load unchanged.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agenteval.cases.calls import CallSpec, compile_expected_calls
from agenteval.cases.conversation import (
    ExpectedState,
    InitialState,
    ProcedureRule,
    TurnSpec,
    UserSpec,
)
from agenteval.cases.tooldefs import tool_list_field

UNTRUSTED_CODE = "agenteval_untrusted_code"
"""Validation context key: true for a case read back from a run (a run may come from
someone else), whose ``$python`` matchers are then not imported (:func:`case_from_run`)."""


def case_from_run(data: str | bytes | dict[str, Any], *, trust_code: bool = False) -> Case:
    """A case of a run's ``cases.jsonl`` snapshot (a JSON line or its object): validated as
    any case, but the code its ``$python`` matchers name is imported only with
    ``trust_code`` (ValueError for a bad case, as ``Case.model_validate`` raises)."""
    context = {UNTRUSTED_CODE: not trust_code}
    if isinstance(data, dict):
        return Case.model_validate(data, context=context)
    return Case.model_validate_json(data, context=context)


Message = dict[str, Any]
"""One chat message: ``{"role": ..., "content": ...}`` (plus any OpenAI message fields)."""

KNOWN_FIELDS = frozenset(
    {
        "id",
        "input",
        "expected",
        "expected_tools",
        "expected_trajectory",
        "expected_calls",
        "match_mode",
        "max_tool_calls",
        "relevant_docs",
        "must_not_contain",
        "canary",
        "context",
        "notes",
        "tags",
        "tools",
        "metadata",
        "turns",
        "user",
        "initial_state",
        "expected_state",
        "procedure",
    }
)


def _str_list(value: Any, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ValueError(f"must be a {what} or a list of them")
    return [str(v) for v in value]


class _CompiledCalls(list[dict[str, Any]]):
    """``expected_calls`` as given (it serialises as the plain list), with its matchers."""

    def __init__(self, raw: list[dict[str, Any]], specs: list[CallSpec]) -> None:
        super().__init__(raw)
        self.specs = specs


_CONVERSATION_SHAPES: dict[str, type] = {
    "turns": list,
    "user": dict,
    "initial_state": dict,
    "expected_state": dict,
    "procedure": list,
}


def _conversation_shape(key: str, value: Any) -> bool:
    """False for a conversation field whose value has another JSON type (``"user":
    "alice"`` in a dataset written for another tool): it is kept in metadata, as before
    these fields existed."""
    shape = _CONVERSATION_SHAPES.get(key)
    return shape is None or value is None or isinstance(value, shape)


def _opening(data: dict[str, Any]) -> str | None:
    """The first user message a conversational case implies (None: not conversational)."""
    turns = data.get("turns") if _conversation_shape("turns", data.get("turns")) else None
    user = data.get("user") if _conversation_shape("user", data.get("user")) else None
    if turns is not None and user is not None:
        raise ValueError("give 'turns' (a script) or 'user' (a simulated user), not both")
    if turns is not None:
        if not isinstance(turns, list) or not turns:
            raise ValueError("turns: must be a non-empty list of user messages")
        first = turns[0]
        text = first.get("user") if isinstance(first, dict) else first
        return text if isinstance(text, str) else None
    if isinstance(user, dict):
        text = user.get("first_message") or user.get("goal")
        return text if isinstance(text, str) else None
    return None


def _conversation_input(data: dict[str, Any]) -> dict[str, Any]:
    """Fill ``input`` of a conversational case with its opening; a given one must match."""
    opening = _opening(data)
    if opening is None:
        return data
    given = data.get("input")
    if given is None:
        return {**data, "input": opening}
    if given != opening:
        what = "turns[0]" if data.get("turns") is not None else "user.first_message or user.goal"
        raise ValueError(f"input: leave it out of a conversation (the first message is {what})")
    return data


class Case(BaseModel):
    """One case of a dataset. Only ``id`` and ``input`` are required."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Unique within the dataset.")
    input: str | list[Message] = Field(
        description="What is asked of the agent: a string, or a list of chat messages."
    )
    expected: str | float | int | None = Field(
        default=None, description="The expected answer (exact_match, correctness rubric)."
    )
    expected_tools: dict[str, int] | None = Field(
        default=None,
        description=(
            "Tools the case needs: a list of names (a name repeated = needed that many times)"
            " or {name: count}. Stored as {name: count}."
        ),
    )
    expected_trajectory: list[str] | None = Field(
        default=None, description="Tool names in the order they must be called."
    )
    expected_calls: list[dict[str, Any]] | None = Field(
        default=None,
        description=(
            "Calls the agent must make, with argument values or matchers (tool_call_match;"
            " grammar in docs/formats.md). [] = no call expected."
        ),
    )
    match_mode: Literal["strict", "unordered", "subset", "superset", "in_order"] | None = Field(
        default=None,
        description="How made calls are compared with expected_calls / expected_trajectory.",
    )
    max_tool_calls: int | None = Field(
        default=None, ge=0, description="Tool calls a good agent needs (step_efficiency)."
    )
    relevant_docs: list[str] | None = Field(
        default=None, description="Document ids a search must return (retrieval_recall)."
    )
    must_not_contain: list[str] | None = Field(
        default=None, description="Text that must never appear in the answer."
    )
    canary: list[str] | None = Field(
        default=None,
        description="Values reachable only through a tool; all must appear in the answer.",
    )
    context: str | None = Field(default=None, description="A passage sent in the prompt.")
    notes: str | None = Field(default=None, description="Extra guidance for the judge.")
    tags: list[str] = Field(default_factory=list, description="Labels for slicing reports.")
    tools: list[dict[str, Any]] | None = Field(
        default=None,
        description=(
            "Tool definitions offered to the agent (OpenAI function format or the bare inner"
            " object); stored as bare {name, description, parameters}."
        ),
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Every field agenteval does not know, kept as is."
    )
    turns: list[TurnSpec] | None = Field(
        default=None,
        min_length=1,
        description=(
            "A scripted conversation: the user's messages in order (strings, or objects with"
            " 'user' and per-turn expectations). 'input' is then the first message."
        ),
    )
    user: UserSpec | None = Field(
        default=None,
        description=(
            "A simulated user (goal, persona, instructions, facts, first_message, max_turns,"
            " stop) played by --user or --user-endpoint. 'input' is then the first message"
            " or the goal."
        ),
    )
    initial_state: InitialState | None = Field(
        default=None,
        description="The SQLite database each trial starts from (its own copy): sql, tables.",
    )
    expected_state: ExpectedState | None = Field(
        default=None,
        description="What the final database must hold (state_match): tables, queries.",
    )
    procedure: list[ProcedureRule] | None = Field(
        default=None,
        description=(
            "Rules over the trajectory (procedure scorer): {tool, after_user | after_call | never}."
        ),
    )

    _call_specs: tuple[Any, list[CallSpec]] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _collect_unknown(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"a case must be an object, got {type(data).__name__}")
        data = _conversation_input(data)
        unknown = {
            k: v for k, v in data.items() if k not in KNOWN_FIELDS or not _conversation_shape(k, v)
        }
        if not unknown:
            return data
        known = {k: v for k, v in data.items() if k not in unknown}
        if not isinstance(known.get("metadata") or {}, dict):
            return known  # 'metadata' itself is rejected by field validation
        meta = dict(known.get("metadata") or {})
        meta.update(unknown)
        known["metadata"] = meta
        return known

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, v: Any) -> str:
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise ValueError("must be a string")
        s = str(v)
        if not s.strip():
            raise ValueError("must not be empty")
        return s

    @field_validator("input", mode="before")
    @classmethod
    def _input(cls, v: Any) -> Any:
        if isinstance(v, str):
            return v
        if isinstance(v, list) and v:
            for i, m in enumerate(v):
                if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                    raise ValueError(f"message {i} must be an object with a string 'role'")
            return v
        raise ValueError("must be a string or a non-empty list of chat messages")

    @field_validator("expected", mode="before")
    @classmethod
    def _expected(cls, v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise ValueError("must be a string or a number")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    @field_validator("expected_tools", mode="before")
    @classmethod
    def _expected_tools(cls, v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, list) and all(isinstance(n, str) for n in v):
            return dict(Counter(v))
        if isinstance(v, dict) and all(
            isinstance(k, str) and isinstance(c, int) and not isinstance(c, bool) and c >= 0
            for k, c in v.items()
        ):
            return v
        raise ValueError("must be a list of tool names or {name: count} with counts >= 0")

    @field_validator("expected_trajectory", "relevant_docs", "tags", mode="before")
    @classmethod
    def _names(cls, v: Any, info: ValidationInfo) -> Any:
        if v is None:
            return [] if info.field_name == "tags" else None
        if not isinstance(v, list) or not all(isinstance(n, str | int) for n in v):
            raise ValueError("must be a list of strings")
        return [str(n) for n in v]

    @field_validator("must_not_contain", "canary", mode="before")
    @classmethod
    def _texts(cls, v: Any) -> Any:
        if v is None:
            return None
        return _str_list(v, "string")

    @field_validator("expected_calls", mode="after")
    @classmethod
    def _expected_calls(cls, v: list[dict[str, Any]] | None, info: ValidationInfo) -> Any:
        if v is None:
            return None
        import_code = not (info.context or {}).get(UNTRUSTED_CODE, False)
        specs = compile_expected_calls(v, import_code=import_code)  # ValueError names it
        return _CompiledCalls(v, specs)

    def call_specs(self) -> list[CallSpec] | None:
        """``expected_calls`` compiled into matchers (at validation); None when it has none."""
        raw = self.expected_calls
        if raw is None:
            return None
        if isinstance(raw, _CompiledCalls):
            return raw.specs
        cached = self._call_specs  # a list put in place without validation (model_copy)
        if cached is None or cached[0] is not raw:
            cached = (raw, compile_expected_calls(raw))
            self._call_specs = cached
        return cached[1]

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, v: Any) -> Any:
        return {} if v is None else v

    @field_validator("tools", mode="before")
    @classmethod
    def _tools(cls, v: Any) -> Any:
        return tool_list_field(v)

    @property
    def needed_tools(self) -> dict[str, int]:
        """``expected_tools`` as {name: count}; empty when the case names none."""
        return dict(self.expected_tools or {})

    @property
    def conversational(self) -> bool:
        """True when the case is a conversation (``turns`` or ``user``)."""
        return self.turns is not None or self.user is not None

    def input_text(self) -> str:
        """The input as plain text: the string, or the last user message's content."""
        if isinstance(self.input, str):
            return self.input
        for m in reversed(self.input):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                return str(m["content"])
        return str(self.input[-1].get("content") or "")
