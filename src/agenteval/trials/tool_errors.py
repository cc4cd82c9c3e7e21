"""When a recorded tool call failed: one rule for every way a call is watched.

A call is read from spans (in-process capture, the OTLP receiver, ``import-traces``), from
a transcript (the ``messages`` an agent returned) or through the recording proxy. Each
path decides whether the call failed with this module, so one agent gets one verdict
however it was watched. A call is an **error** (``error`` set, ``result`` None) when,
first rule that fires:

1. ``exception``: its span has an ``exception`` event;
2. ``status``: its span has status ERROR;
3. ``flag``: its message says so — LangChain ``status: "error"``, Anthropic ``is_error:
   true``, a GenAI ``tool_call_response`` with ``is_error: true``;
4. ``text``: the tool's output is **text shaped like an error** — what a framework sends
   the model after catching the exception. The text, less leading whitespace, starts with
   one of (:data:`ERROR_PREFIXES`; the first three in any case):

   - ``Error:`` (LangGraph's ``ToolNode``, Strands, the usual ``f"Error: {e}"``);
   - ``Exception:``;
   - ``Error executing tool`` (MCP servers, smolagents);
   - ``Traceback (most recent call last)`` (a Python traceback);
   - ``An error occurred while running the tool`` (the OpenAI Agents SDK's default);
   - an exception's name and a colon and a space: a capitalised dotted identifier ending
     in ``Error`` or ``Exception`` (``RuntimeError: order beta has already shipped``,
     ``requests.exceptions.ConnectionError: ...``).

The text rule is **conservative**: only the start of the text counts, and only these
shapes. A result that merely contains the word (``"No errors found"``, ``"error rate:
2%"``, ``"Errors: 0"``, ``"The error was fixed"``), a JSON object with an ``error`` key, or
anything that is not text is a result. A tool whose honest result starts with ``Error:``
is recorded as an error — return a JSON object, or set the span status, to say otherwise.

Tool calls an agent returns itself (``AgentOutput.tool_calls``) are taken as given: the
agent has already said which call failed.

**Which rule fired** is kept on the trial: ``metadata["tool_errors"]``, one
``{"call": i, "rule": rule}`` per failed call (``i`` its index in ``tool_calls``; for the
text rule also ``"prefix"``, the shape matched). A failed call not listed had its error
given by the agent or by the source itself (an unfinished span, a timeout).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agenteval.trials.trial import ToolCall

__all__ = [
    "ERROR_PREFIXES",
    "RULES",
    "TOOL_ERRORS",
    "error_text_prefix",
    "mark",
    "output_error",
    "rule_of",
    "tool_error_list",
]

TOOL_ERRORS = "tool_errors"
"""The trial metadata key saying which rule made each failed call an error."""
RULES = ("exception", "status", "flag", "text")
"""The rules, in the order they are tried."""
ERROR_PREFIXES = (
    "Error:",
    "Exception:",
    "Error executing tool",
    "Traceback (most recent call last)",
    "An error occurred while running the tool",
    "<ExceptionName>: ",
)
"""The shapes of error text, as documented (the last is a pattern)."""

_FIXED = re.compile(
    r"(?P<p>(?i:error\s*:)|(?i:exception\s*:)|(?i:error executing tool)"
    r"|Traceback \(most recent call last\)|An error occurred while running the tool)"
)
_NAMED = re.compile(r"(?:[A-Za-z_]\w*\.)*(?P<p>[A-Z]\w*(?:Error|Exception)): ")
_ATTR = "_agenteval_error_rule"


def error_text_prefix(content: Any) -> str | None:
    """The error shape a tool output's text starts with (module docstring), else None."""
    if not isinstance(content, str):
        return None
    text = content.lstrip()
    m = _FIXED.match(text)
    if m is not None:
        p = m.group("p")
        for known in ERROR_PREFIXES[:5]:
            if p.lower().replace(" ", "") == known.lower().replace(" ", ""):
                return known
        return p
    m = _NAMED.match(text)
    if m is not None:
        return f"{m.group('p')}: "
    return None


def output_error(content: Any, flagged: bool) -> tuple[str, str | None] | None:
    """``(rule, prefix)`` when a tool output is an error by rule 3 (``flagged``: its
    message says so) or rule 4 (error-shaped text), else None."""
    if flagged:
        return ("flag", None)
    prefix = error_text_prefix(content)
    return None if prefix is None else ("text", prefix)


def mark(call: ToolCall, rule: str, prefix: str | None = None) -> ToolCall:
    """Note on ``call`` (in memory only, never written) which rule made it an error;
    returns ``call``."""
    call.__pydantic_private__ = {**(call.__pydantic_private__ or {}), _ATTR: (rule, prefix)}
    return call


def rule_of(call: ToolCall) -> tuple[str, str | None] | None:
    """``(rule, prefix)`` that :func:`mark` noted on ``call``, else None."""
    got = (call.__pydantic_private__ or {}).get(_ATTR)
    if isinstance(got, tuple) and call.error is not None:
        return got
    return None


def tool_error_list(calls: Sequence[ToolCall], clear: bool = True) -> list[dict[str, Any]]:
    """``metadata["tool_errors"]`` for ``calls``: which rule made each failed call an
    error (calls without a noted rule are left out). With ``clear`` the notes are removed
    from the calls (a trial's calls then compare equal to the same calls read back)."""
    out: list[dict[str, Any]] = []
    for i, c in enumerate(calls):
        got = rule_of(c)
        if clear and c.__pydantic_private__:
            c.__pydantic_private__ = None
        if got is None:
            continue
        entry: dict[str, Any] = {"call": i, "rule": got[0]}
        if got[1] is not None:
            entry["prefix"] = got[1]
        out.append(entry)
    return out
