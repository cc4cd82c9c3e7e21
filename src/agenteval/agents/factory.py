"""Agent factories: ``--agent module:make_agent`` where ``make_agent()`` builds the agent.

A callable named by ``--agent`` (or passed to ``evaluate``) that takes **no parameters**
is a factory: it is called once, when the run starts, in every process that runs trials
(the driver without ``--processes``; each worker process or Ray actor with it), and
returns the agent: a function taking the case (as for ``--agent module:fn``), an
:class:`~agenteval.agents.base.Agent` adapter, or an awaitable giving one of these. Use it
for agents that hold what cannot be pickled or shared between processes (a model loaded
in memory, a database connection, a LangGraph graph with a lock): only the factory's
import path travels to the workers, and each builds its own agent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from agenteval._util.imports import load_callable
from agenteval.agents.base import Agent, AgentOutput, Recorder
from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case
from agenteval.errors import FieldName, InputError


def is_factory(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` takes no parameters at all (an agent takes the case)."""
    if inspect.isclass(fn):
        return False
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.default is inspect.Parameter.empty for p in params) and not any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params
    )


def python_agent(
    target: str | Callable[..., Any], *, capture: str = "auto", capture_proxy: str | None = None
) -> Agent:
    """The agent ``target`` names: a :class:`FactoryAgent` for a factory, else a
    :class:`~agenteval.agents.python.PythonAgent`."""
    fn = load_callable(target, what="agent", option="agent") if isinstance(target, str) else target
    if is_factory(fn):
        return FactoryAgent(target, capture=capture, capture_proxy=capture_proxy)
    return PythonAgent(target, capture=capture, capture_proxy=capture_proxy)


class FactoryAgent:
    """An agent built by calling a factory in :meth:`start` (see the module docstring)."""

    def __init__(
        self,
        factory: str | Callable[..., Any],
        *,
        capture: str = "auto",
        capture_proxy: str | None = None,
    ) -> None:
        self._ref = factory if isinstance(factory, str) else None
        if isinstance(factory, str):
            self.factory = load_callable(factory, what="agent", option="agent")
            self.target = factory
        else:
            self.factory = factory
            self.target = f"{getattr(factory, '__module__', '?')}:" + getattr(
                factory, "__qualname__", type(factory).__name__
            )
        self._capture = capture
        self._capture_proxy = capture_proxy
        self._agent: Agent | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the factory's import path (or the factory), never the built agent."""
        what = self._ref if self._ref is not None else self.factory
        return (_rebuild, (what, self._capture, self._capture_proxy))

    def describe(self) -> dict[str, Any]:
        """``{kind: "python", target, factory: true}``."""
        return {"kind": "python", "target": self.target, "factory": True}

    async def start(self) -> None:
        """Call the factory and start what it built."""
        made = self.factory()
        if inspect.isawaitable(made):
            made = await made
        if all(hasattr(made, m) for m in ("run", "start", "close", "describe")):
            if self._capture_proxy is not None:
                raise InputError(
                    (
                        f"agent factory '{self.target}' returned an Agent adapter; ",
                        FieldName("capture_proxy"),
                        " needs it to return a function taking the case",
                    )
                )
            agent: Agent = made
        elif callable(made):
            agent = PythonAgent(made, capture=self._capture, capture_proxy=self._capture_proxy)
        else:
            raise InputError(
                f"agent factory '{self.target}' returned {type(made).__name__}; expected a"
                " function taking the case or an Agent"
            )
        await agent.start()
        self._agent = agent

    async def close(self) -> None:
        """Close the built agent."""
        if self._agent is not None:
            await self._agent.close()
            self._agent = None

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Run the built agent."""
        assert self._agent is not None, "start() first"
        return await self._agent.run(case, repeat, rec)


def _rebuild(
    factory: str | Callable[..., Any], capture: str, capture_proxy: str | None = None
) -> FactoryAgent:
    return FactoryAgent(factory, capture=capture, capture_proxy=capture_proxy)
