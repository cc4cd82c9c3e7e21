"""The runner: calls the agent on every (case, repeat), concurrently, and records trials.

One asyncio event loop and ``concurrency`` worker coroutines pulling from one shared,
lazily read stream of (case, repeat) pairs: no task or thread per trial, and memory does
not grow with the dataset. Each finished trial is scored and appended to the run at once
(see :mod:`agenteval.rundir`), so a crash loses only the trials in flight and ``--resume``
picks up the rest.

Failures never stop the run. A trial that fails is recorded with its cause:
``timeout`` (the per-trial timeout expired), a cause raised by the adapter as
:class:`AgentFailure` (``rate_limited``, ``server_error``, ``connection``, ``http_error``,
``malformed_response``...), ``agent_error`` (any other exception from the agent, including
``SystemExit``, ``KeyboardInterrupt`` and other ``BaseException`` it raises: an agent
never ends the harness) or ``cancelled`` (interrupted by Ctrl-C twice).

Every trial is recordable: one that cannot be written as it is (a lone surrogate in its
text, a value JSON cannot encode) is repaired or turned into an ``agent_error`` by
:mod:`agenteval.rundir.recordable`, and the run goes on. Ctrl-C twice also cancels the judge calls
in flight; their scores are inconclusive (``inconclusive: cancelled ...``). When the run can
no longer be written (disk full, permission denied) no further trial is appended (a torn
line would follow), the run stops starting trials, and :attr:`RunControl.io_error` holds the
error to report.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import ValidationError

from agenteval._util.gc import frozen_heap
from agenteval.agents.base import Agent, AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.errors import RunWriteError
from agenteval.rundir import TRIALS, RunWriter
from agenteval.rundir.recordable import recordable, recordable_scores
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.scoring.spec import ScorerSpec
from agenteval.trials.trial import Failure, Latency, Trial


class TrialJudge(Protocol):
    """What the runner needs of an LLM judge (see :mod:`agenteval.judge`)."""

    async def score(self, case: Case, trial: Trial) -> dict[str, Score]: ...

    def inconclusive(self, reason: str) -> dict[str, Score]:
        """Every score this judge gives, as inconclusive with ``reason``."""
        ...


class RunJudge(TrialJudge, Protocol):
    """What a run needs of its LLM judge (:class:`agenteval.judge.Judge` is one): it is
    started and closed on the run's event loop, and named in ``run.json``."""

    @property
    def specs(self) -> list[ScorerSpec]:
        """The scorer spec of each score it gives (recorded in ``run.json``)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records under ``agent.judge`` (never a secret)."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


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
class RunControl:
    """How a run is steered from outside (signal handlers) and what stopped it."""

    stop: bool = False
    """No new trial starts (Ctrl-C once, SIGTERM, SIGHUP, a write error)."""
    cancelled: bool = False
    """The trials and judge calls in flight were cancelled (Ctrl-C twice)."""
    in_flight: set[asyncio.Task[Any]] = field(default_factory=set)
    io_error: RunWriteError | None = None
    """The run could not be written; nothing more was appended after it."""

    def cancel(self) -> None:
        """Stop starting trials and cancel those in flight (and their judge calls)."""
        self.stop = True
        self.cancelled = True
        for t in list(self.in_flight):
            t.cancel()


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
    metadata: dict[str, Any] = dict(rec.metadata)  # kept when the agent failed
    output = None
    if out is not None:
        output = out.output
        if out.tool_calls is not None:
            tool_calls = out.tool_calls
        tools = out.tools
        if out.messages is not None:
            messages = out.messages
        metadata = out.metadata
    observed: dict[str, Any] = {
        "case_id": case.id,
        "repeat": repeat,
        "usage": rec.usage,
        "latency": Latency(total_s=total_s, active_s=rec.active_s if rec.active_s else None),
        "retries": rec.retries,
        "cached": rec.cached,
        "started_at": started,
    }
    try:
        return Trial(
            **observed,
            output=output,
            tool_calls=tool_calls,
            failure=failure,
            tools=tools,
            messages=messages,
            metadata=metadata,
        )
    except ValueError as e:  # e.g. ``tools`` or ``messages`` of the wrong shape
        problem = f"the agent's result cannot be recorded: {_problem(e)}"
        return Trial(**observed, failure=Failure(cause="agent_error", message=problem[:2000]))


def _problem(e: ValueError) -> str:
    """One line for a validation error: the first problem and where it is."""
    if isinstance(e, ValidationError):
        err = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {err['msg']}" if where else str(err["msg"])
    return " ".join(str(e).split())


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
        _uncancel()
        failure = Failure(cause="cancelled", message="interrupted before the agent answered")
    except (SystemExit, KeyboardInterrupt) as e:  # raised by the agent: never the harness's exit
        what = f"{type(e).__name__}({e})" if str(e) else type(e).__name__
        failure = Failure(cause="agent_error", message=f"the agent raised {what}"[:2000])
    except BaseException as e:  # whatever else the agent raises is recorded
        failure = Failure(cause="agent_error", message=f"{type(e).__name__}: {e}"[:2000])
    total = time.perf_counter() - t0
    if failure is not None:
        out = None
    settle = getattr(agent, "settle", None)  # e.g. late spans (traces.receiver_agent)
    if settle is not None:  # outside the timeout and the latency: the agent has answered
        out = await settle(rec, out)
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
    control: RunControl | None = None,
) -> RunProgress:
    """Run every item with ``settings.concurrency`` workers; score and write each trial.

    Never raises for what an agent, a judge or the disk does (module docstring): a write
    error is left in ``control.io_error``.
    """
    prog = progress or RunProgress()
    ctl = control or RunControl()

    async def scored(case: Case, trial: Trial) -> dict[str, Score]:
        scores = scorers.apply(case, trial)
        if judge is None:
            return scores
        if ctl.cancelled:
            scores.update(judge.inconclusive(_CANCELLED_JUDGE))
            return scores
        try:
            scores.update(await judge.score(case, trial))
        except asyncio.CancelledError:  # Ctrl-C twice while the judge was asked
            _uncancel()
            scores.update(judge.inconclusive(_CANCELLED_JUDGE))
        return scores

    async def repaired(
        case: Case, trial: Trial, scores: dict[str, Score]
    ) -> tuple[Trial, dict[str, Score]]:
        fixed, failed = recordable(trial)
        if failed:  # a different trial now: scored and judged afresh
            return fixed, recordable_scores(await scored(case, fixed))
        new = scorers.apply(case, fixed)  # what `rescore` of the written trial gives
        new.update({k: v for k, v in scores.items() if k not in new})  # judged once only
        return fixed, recordable_scores(new)

    async def finish(case: Case, trial: Trial) -> None:
        if ctl.io_error is not None:
            return  # nothing is appended after a write error; --resume runs it again
        scores = await scored(case, trial)
        try:
            written = writer.written
            try:
                writer.append(trial, scores, repair=False)
            except (ValueError, TypeError):  # not recordable as it is (agenteval.rundir.recordable)
                if writer.written != written:
                    raise  # the line was written and an observer failed: a bug, not data
                trial, scores = await repaired(case, trial, scores)
                writer.append(trial, scores)
        except OSError as e:
            ctl.io_error = RunWriteError.from_os_error(e, writer.run_dir / TRIALS)
            ctl.stop = True
            return
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

_CANCELLED_JUDGE = "cancelled by an interrupt (Ctrl-C twice) before the judge answered"


def _uncancel() -> None:
    """Forget one pending cancellation of the current task (it was handled)."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def failure_problem(
    summary: dict[str, Any], max_failure_rate: float | None, *, name: str = "max_failure_rate"
) -> str | None:
    """Why a finished run must exit with ``EXIT_NO_ANSWERS``, or None.

    No trial got an answer (and there was at least one), or the share of failed trials is
    above ``max_failure_rate`` (called ``name`` in the message: the command line passes its
    flag). ``summary`` is the run's summary (``run.json``).
    """
    trials = int(summary.get("trials") or 0)
    failed = int(summary.get("failed") or 0)
    if not trials:
        return None
    causes = (summary.get("failures") or {}).get("by_cause") or {}
    top = sorted(causes.items(), key=lambda kv: -int(kv[1].get("count", 0)))[:3]
    detail = ", ".join(f"{c} {v.get('count', 0)}" for c, v in top)
    detail = f" ({detail})" if detail else ""
    if not summary.get("answered"):
        return f"no trial got an answer: {failed} of {trials} trials failed{detail}"
    if max_failure_rate is not None and failed / trials > max_failure_rate:
        return (
            f"{failed} of {trials} trials failed ({failed / trials:.0%}){detail}, above"
            f" {name} {max_failure_rate:g}"
        )
    return None
