"""The runner: calls the agent on every (case, repeat), concurrently, and records trials.

One asyncio event loop and ``concurrency`` worker coroutines pulling from one shared,
lazily read stream of (case, repeat) pairs: no task or thread per trial, and memory does
not grow with the dataset. Each finished trial is scored and appended to the run at once
(see :mod:`agenteval.rundir`), so a crash loses only the trials in flight and ``--resume``
picks up the rest.

Failures never stop the run. A trial that fails is recorded with its cause:
``timeout`` (the per-trial timeout expired), a cause raised by the adapter as
:class:`AgentFailure` (``rate_limited``, ``server_error``, ``connection``, ``http_error``,
``malformed_response``...), ``agent_error`` (any other exception from the agent) or
``cancelled`` (interrupted by Ctrl-C).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from agenteval._gc import frozen_heap
from agenteval.agents.base import Agent, AgentFailure, AgentOutput, Recorder
from agenteval.case import Case
from agenteval.rundir import RunWriter
from agenteval.score import Score
from agenteval.scoring import Scorers
from agenteval.trial import Failure, Latency, Trial


class TrialJudge(Protocol):
    """What the runner needs of an LLM judge (see :mod:`agenteval.judge`)."""

    async def score(self, case: Case, trial: Trial) -> dict[str, Score]: ...


@dataclass(slots=True)
class RunSettings:
    """How to run: all configuration is passed in, nothing is ambient."""

    concurrency: int = 8
    timeout_s: float | None = None
    repeats: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "repeats": self.repeats,
        }


@dataclass(slots=True)
class RunProgress:
    """Counters the runner updates as trials finish (read by progress displays)."""

    done: int = 0
    failed: int = 0
    skipped: int = 0
    on_trial: Callable[[RunProgress, Trial], None] | None = None


@dataclass(slots=True)
class _Control:
    stop: bool = False
    in_flight: set[asyncio.Task[Any]] = field(default_factory=set)


def work_items(
    cases: Iterable[Case], repeats: int, done: set[tuple[str, int]] | None = None
) -> Iterator[tuple[Case, int]]:
    """Every (case, repeat) not already in ``done``, in dataset order."""
    for case in cases:
        for r in range(repeats):
            if done is None or (case.id, r) not in done:
                yield case, r


def _trial_from(
    case: Case,
    repeat: int,
    rec: Recorder,
    out: AgentOutput | None,
    failure: Failure | None,
    started: datetime,
    total_s: float,
) -> Trial:
    tool_calls = rec.tool_calls
    tools = None
    messages = rec.messages
    metadata: dict[str, Any] = {}
    output = None
    if out is not None:
        output = out.output
        if out.tool_calls is not None:
            tool_calls = out.tool_calls
        tools = out.tools
        if out.messages is not None:
            messages = out.messages
        metadata = out.metadata
    return Trial(
        case_id=case.id,
        repeat=repeat,
        output=output,
        tool_calls=tool_calls,
        usage=rec.usage,
        latency=Latency(total_s=total_s, active_s=rec.active_s if rec.active_s else None),
        retries=rec.retries,
        failure=failure,
        started_at=started,
        tools=tools,
        messages=messages,
        metadata=metadata,
    )


async def run_one(agent: Agent, case: Case, repeat: int, timeout_s: float | None) -> Trial:
    """Attempt one case once and return the trial, whatever happened."""
    rec = Recorder()
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    out: AgentOutput | None = None
    failure: Failure | None = None
    cm: asyncio.Timeout | None = None
    try:
        if timeout_s is None:
            out = await agent.run(case, repeat, rec)
        else:
            async with asyncio.timeout(timeout_s) as cm:
                out = await agent.run(case, repeat, rec)
    except TimeoutError as e:
        if cm is not None and cm.expired():
            failure = Failure(cause="timeout", message=f"no answer within {timeout_s:g} s")
        else:
            failure = Failure(cause="agent_error", message=f"TimeoutError: {e}")
    except AgentFailure as e:
        failure = Failure(cause=e.cause, message=e.message)
    except asyncio.CancelledError:
        # Ctrl-C twice: record the trial as cancelled (resume runs it again) and let the
        # worker see ``stop``; uncancel so that later awaits in this task behave normally.
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        failure = Failure(cause="cancelled", message="interrupted before the agent answered")
    except Exception as e:
        failure = Failure(cause="agent_error", message=f"{type(e).__name__}: {e}"[:2000])
    total = time.perf_counter() - t0
    if failure is not None:
        out = None
    return _trial_from(case, repeat, rec, out, failure, started, total)


async def run_trials(
    agent: Agent,
    items: Iterator[tuple[Case, int]],
    *,
    settings: RunSettings,
    scorers: Scorers,
    writer: RunWriter,
    judge: TrialJudge | None = None,
    progress: RunProgress | None = None,
    control: _Control | None = None,
) -> RunProgress:
    """Run every item with ``settings.concurrency`` workers; score and write each trial."""
    prog = progress or RunProgress()
    ctl = control or _Control()

    async def finish(case: Case, trial: Trial) -> None:
        scores = scorers.apply(case, trial)
        if judge is not None:
            scores.update(await judge.score(case, trial))
        writer.append(trial, scores)
        prog.done += 1
        if trial.failure is not None:
            prog.failed += 1
        if prog.on_trial is not None:
            prog.on_trial(prog, trial)

    async def worker() -> None:
        for case, repeat in items:
            if ctl.stop:
                return
            trial = await run_one(agent, case, repeat, settings.timeout_s)
            await finish(case, trial)

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, settings.concurrency))]
    ctl.in_flight.update(workers)
    try:
        with frozen_heap():
            await asyncio.gather(*workers)
    finally:
        ctl.in_flight.difference_update(workers)
    return prog


AgentFactory = Callable[[], Awaitable[Agent]]
