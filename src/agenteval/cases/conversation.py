"""What a conversational case declares: scripted turns, a simulated user, state and rules.

These are the types of the case fields ``turns``, ``user``, ``initial_state``,
``expected_state`` and ``procedure`` (see ``docs/conversations.md`` and
``docs/formats.md``). Each rejects unknown keys, so a typo is an error naming the field
(``turns.1.expectd``) instead of an expectation silently never checked.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agenteval.cases.calls import compile_expected_calls

Scalar = str | int | float | bool | None
DEFAULT_STOP = "###STOP###"
"""The phrase a simulated user writes to end the conversation (default of ``user.stop``)."""


def _texts(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise ValueError("must be a string or a list of strings")
    return v


class TurnSpec(BaseModel):
    """One scripted user turn: the message, and what the agent's reply to it must satisfy.

    Expectations (all optional) are checked on this turn only, by the ``turn_expectations``
    scorer: ``expected`` (as ``exact_match``), ``must_contain`` (every string appears,
    ignoring case), ``must_not_contain`` (as ``avoids_forbidden_text``), ``expected_tools``
    (as ``tool_selection``) and ``expected_calls`` (as ``tool_call_match``), over this
    turn's answer and the tool calls made while answering it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str = Field(description="What the user says in this turn.")
    expected: str | float | int | None = None
    must_contain: list[str] | None = None
    must_not_contain: list[str] | None = None
    expected_tools: dict[str, int] | None = None
    expected_calls: list[dict[str, Any]] | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"user": data}
        if not isinstance(data, dict):
            raise ValueError("a turn must be a string or an object with 'user'")
        return data

    @field_validator("user")
    @classmethod
    def _user(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("expected", mode="before")
    @classmethod
    def _expected(cls, v: Any) -> Any:
        if isinstance(v, bool) or (v is not None and not isinstance(v, str | int | float)):
            raise ValueError("must be a string or a number")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    @field_validator("must_contain", "must_not_contain", mode="before")
    @classmethod
    def _text_list(cls, v: Any) -> Any:
        return _texts(v)

    @field_validator("expected_tools", mode="before")
    @classmethod
    def _tools(cls, v: Any) -> Any:
        if isinstance(v, list) and all(isinstance(n, str) for n in v):
            return dict(Counter(v))
        return v

    @field_validator("expected_calls", mode="after")
    @classmethod
    def _calls(cls, v: list[dict[str, Any]] | None) -> Any:
        if v is not None:
            compile_expected_calls(v)  # ValueError names the call and argument
        return v

    @property
    def has_expectations(self) -> bool:
        """True when this turn declares anything to check."""
        return any(
            x is not None
            for x in (
                self.expected,
                self.must_contain,
                self.must_not_contain,
                self.expected_tools,
                self.expected_calls,
            )
        )


class UserSpec(BaseModel):
    """A simulated user: who they are and what they want (``docs/conversations.md``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str = Field(description="What the user wants to get done.")
    persona: str | None = Field(default=None, description="How the user talks and behaves.")
    instructions: str | None = Field(default=None, description="Rules the user follows.")
    facts: dict[str, Any] = Field(
        default_factory=dict, description="What the user knows (order ids, addresses...)."
    )
    first_message: str | None = Field(
        default=None, description="The user's opening message; absent: the simulator writes it."
    )
    max_turns: int = Field(default=10, ge=1, le=100, description="Agent turns at most.")
    stop: str = Field(default=DEFAULT_STOP, min_length=1, description="Ends the conversation.")

    @field_validator("goal")
    @classmethod
    def _goal(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @model_validator(mode="after")
    def _opening(self) -> UserSpec:
        """An opening that is empty or holds the stop phrase would end the conversation
        before it starts."""
        first = self.first_message
        if first is not None and not first.strip():
            raise ValueError(
                "first_message must not be empty (leave it out to let the user write it)"
            )
        if first is not None and self.stop in first:
            raise ValueError(f"first_message contains the stop phrase {self.stop!r}")
        return self


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _rows(name: str, rows: Any) -> list[dict[str, Scalar]]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"table {name!r}: must be a list of row objects")
    for i, row in enumerate(rows):
        for col, value in row.items():
            if not _IDENT.match(col):
                raise ValueError(f"table {name!r} row {i}: column {col!r} is not a plain name")
            if not isinstance(value, Scalar):
                raise ValueError(
                    f"table {name!r} row {i} column {col!r}: must be a string, number,"
                    " boolean or null"
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"table {name!r} row {i} column {col!r}: must be finite")
    return rows


def _tables(v: Any) -> Any:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise ValueError("must map table names to lists of rows")
    for name, rows in v.items():
        if not _IDENT.match(name):
            raise ValueError(f"table name {name!r} is not a plain name")
        _rows(name, rows)
    return v


class InitialState(BaseModel):
    """The database a trial starts from: ``sql`` statements run first, then ``tables`` rows
    inserted (each table created with the columns its rows name, when ``sql`` did not)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sql: list[str] | None = None
    tables: dict[str, list[dict[str, Any]]] | None = None

    @field_validator("sql", mode="before")
    @classmethod
    def _sql(cls, v: Any) -> Any:
        return _texts(v)

    @field_validator("tables", mode="before")
    @classmethod
    def _tables(cls, v: Any) -> Any:
        return _tables(v)

    @model_validator(mode="after")
    def _something(self) -> InitialState:
        if not self.sql and not self.tables:
            raise ValueError("give 'sql' (statements) and/or 'tables' (rows per table)")
        return self


class StateQuery(BaseModel):
    """A read-only query on the final state and the rows it must return, in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sql: str
    expected: list[list[Any]]

    @field_validator("sql")
    @classmethod
    def _select(cls, v: str) -> str:
        if not re.match(r"^\s*(select|with)\b", v, re.IGNORECASE):
            raise ValueError("must be a SELECT (or WITH ... SELECT) query")
        return v

    @field_validator("expected", mode="before")
    @classmethod
    def _expected(cls, v: Any) -> Any:
        """A scalar is one row of one column; a list of scalars is one column."""
        if not isinstance(v, list):
            return [[v]]
        return [r if isinstance(r, list) else [r] for r in v]


class ExpectedState(BaseModel):
    """What the final state must hold (checked by the ``state_match`` scorer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tables: dict[str, list[dict[str, Any]]] | None = None
    queries: list[StateQuery] | None = None

    @field_validator("tables", mode="before")
    @classmethod
    def _tables(cls, v: Any) -> Any:
        return _tables(v)

    @model_validator(mode="after")
    def _something(self) -> ExpectedState:
        if self.tables is None and not self.queries:
            raise ValueError("give 'tables' (exact rows) and/or 'queries' (SQL and result)")
        return self


class ProcedureRule(BaseModel):
    """One rule over the trajectory (checked by the ``procedure`` scorer).

    Exactly one of: ``after_user`` (a regular expression the latest user message before
    each call of ``tool`` must match, ignoring case), ``after_call`` (a tool that must have
    been called successfully before each call of ``tool``), ``never: true`` (``tool`` must
    not be called at all).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    after_user: str | None = None
    after_call: str | None = None
    never: bool = False

    @field_validator("after_user")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"not a valid regular expression: {e}") from None
        return v

    @model_validator(mode="after")
    def _one(self) -> ProcedureRule:
        given = [self.after_user is not None, self.after_call is not None, self.never]
        if sum(given) != 1:
            raise ValueError("give exactly one of after_user, after_call, never: true")
        return self

    def describe(self) -> str:
        """The rule in words, e.g. ``cancel_order only after a user message matching 'yes'``."""
        if self.never:
            return f"{self.tool} is never called"
        if self.after_call is not None:
            return f"{self.tool} only after a successful {self.after_call}"
        return f"{self.tool} only after a user message matching {self.after_user!r}"
