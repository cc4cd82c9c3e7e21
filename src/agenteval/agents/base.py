"""What every agent adapter implements, and what it reports back to the runner.

The runner owns the clock, the timeout and the trial; an adapter only talks to the agent.
It is handed a :class:`Recorder` for the trial, to which the HTTP layer adds every retry,
the time spent inside requests and token usage *as they happen*, so that a trial that
times out or fails still carries what was observed before it stopped.

An adapter returns an :class:`AgentOutput` or raises :class:`AgentFailure` with a cause
from :data:`agenteval.trials.trial.FAILURE_CAUSES`. Anything else it raises — any exception, and
``SystemExit``, ``KeyboardInterrupt`` or another ``BaseException`` — is recorded by the
runner as ``agent_error``; it never ends the run. What it returns need not be valid
Unicode or JSON: the runner repairs lone surrogates and records a result JSON cannot
encode as an ``agent_error`` (:mod:`agenteval.rundir.recordable`).

An adapter is handed the dataset's case, which the scorers then use: it must not change
it. (:class:`~agenteval.agents.python.PythonAgent` hands user code its own deep copy.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from agenteval.cases.case import Case
from agenteval.llm.recorder import AgentFailure, Recorder
from agenteval.trials.trial import ToolCall

__all__ = ["Agent", "AgentFailure", "AgentOutput", "Recorder"]


@dataclass(slots=True)
class AgentOutput:
    """What an adapter returns when the agent answered."""

    output: str | None
    tool_calls: list[ToolCall] | None = None  # None: keep what the Recorder collected
    tools: list[dict[str, Any]] | None = None  # the tool definitions offered, when known
    messages: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    """An agent under test.

    An agent may also have ``async def settle(rec, out) -> AgentOutput | None``: the runner
    calls it once per trial after ``run`` returned or failed (``out`` None), outside the
    timeout and the measured latency, and records what it returns (e.g. spans that
    arrived late: :mod:`agenteval.traces.receiver_agent`).
    """

    def describe(self) -> dict[str, Any]:
        """What goes in ``run.json`` under ``agent``: kind, target, model... never a secret."""
        ...

    async def start(self) -> None:
        """Open connections etc. Called once before the first trial."""
        ...

    async def close(self) -> None:
        """Release what ``start`` opened. Called once after the last trial."""
        ...

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Attempt one case. Raise AgentFailure for a known cause."""
        ...
