"""``run`` on worker processes: workers call the agent and score; the driver writes.

:class:`RunJob` is what each worker keeps: the agent (started once per worker, on the
worker's own event loop), the scorers and the judge. It turns a batch of (case, repeat)
into finished ``trials.jsonl`` lines, exactly as :func:`agenteval.run.runner.run_trials`
would write them (same trial, same scores, same repair of a trial that cannot be written
as it is). :func:`run_parallel` drives the pool and appends each line in the driver, the
one writer of the run; the trials of a lost worker are run again or recorded with cause
``worker_lost`` (:mod:`agenteval.executors.driver`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agenteval._util.loop import new_event_loop
from agenteval.agents.base import Agent
from agenteval.cases.case import Case
from agenteval.errors import RunWriteError
from agenteval.executors.driver import drive
from agenteval.executors.pool import JobSpec, Pool
from agenteval.run.runner import RunControl, RunJudge, RunProgress, RunSettings, TrialJudge, run_one
from agenteval.rundir import TRIALS, RunWriter
from agenteval.rundir.recordable import recordable, recordable_scores
from agenteval.rundir.trials import _ScoreKey, _trial_line
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.trials.trial import Failure, Trial

if TYPE_CHECKING:
    from agenteval.executors import Executor

Item = tuple[Case, int]
Result = list[tuple[str, bool]]
"""Per item of the batch, in order: the trial's line and whether the trial failed."""


@dataclass
class RunJob:
    """One worker's agent, scorers and judge (see the module docstring)."""

    agent: Agent
    scorers: Scorers
    judge: RunJudge | None
    timeout_s: float | None
    concurrency: int
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _frags: dict[_ScoreKey, str] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {
            k: getattr(self, k) for k in ("agent", "scorers", "judge", "timeout_s", "concurrency")
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def setup(self) -> None:
        """Start the agent (and the judge) on this worker's event loop."""
        self._loop = new_event_loop()
        self._loop.run_until_complete(self.agent.start())
        if self.judge is not None:
            self._loop.run_until_complete(self.judge.start())

    def __call__(self, batch: list[Item]) -> Result:
        assert self._loop is not None, "setup() first"
        return self._loop.run_until_complete(self._batch(batch))

    async def _batch(self, batch: list[Item]) -> Result:
        sem = asyncio.Semaphore(max(1, self.concurrency))

        async def one(case: Case, repeat: int) -> tuple[str, bool]:
            async with sem:
                trial = await run_one(self.agent, case, repeat, self.timeout_s)
                scores = await self._scored(case, trial)
                return await self._line(case, trial, scores), trial.failure is not None

        return list(await asyncio.gather(*(one(c, r) for c, r in batch)))

    async def _scored(self, case: Case, trial: Trial) -> dict[str, Score]:
        scores = self.scorers.apply(case, trial)
        if self.judge is not None:
            scores.update(await self.judge.score(case, trial))
        return scores

    async def _line(self, case: Case, trial: Trial, scores: dict[str, Score]) -> str:
        """The line the runner would write (``agenteval.run.runner.run_trials``'s repair)."""
        try:
            return _trial_line(trial, scores, self._frags, repair=False)
        except (ValueError, TypeError):  # not recordable as it is (agenteval.rundir.recordable)
            fixed, failed = recordable(trial)
            if failed:  # a different trial now: scored and judged afresh
                new = recordable_scores(await self._scored(case, fixed))
            else:
                new = self.scorers.apply(case, fixed)
                new.update({k: v for k, v in scores.items() if k not in new})
                new = recordable_scores(new)
            return _trial_line(fixed, new, self._frags)

    def close(self) -> None:
        """Close the agent and the judge (a worker asked to end)."""
        if self._loop is None:
            return
        self._loop.run_until_complete(self.agent.close())
        if self.judge is not None:
            self._loop.run_until_complete(self.judge.close())
        self._loop.close()


def batch_size_for(settings: RunSettings) -> int:
    """Trials per batch: two rounds of the per-worker concurrency (at least 4)."""
    return max(4, 2 * settings.concurrency)


def run_parallel(
    pool: Pool,
    items: Iterator[Item],
    *,
    settings: RunSettings,
    scorers: Scorers,
    judge: TrialJudge | None,
    writer: RunWriter,
    progress: RunProgress,
    control: RunControl,
) -> None:
    """Run every item on ``pool``; append each trial in this (the driver's) thread.

    Ctrl-C once (``control.stop``): no new batch, those out finish and are written. Twice
    (``control.cancelled``): return at once; the trials in flight are not written (the
    caller ends the workers) and ``--resume`` runs them. A write error stops the run as in
    :func:`agenteval.run.runner.run_trials` (``control.io_error``). Raises
    :class:`~agenteval.executors.driver.WorkersLostError` when every worker was lost.
    """

    def count(case: Case, repeat: int, failed: bool) -> None:
        progress.done += 1
        if failed:
            progress.failed += 1
        if progress.on_trial is not None:
            progress.on_trial(progress, Trial(case_id=case.id, repeat=repeat))

    def write(line: str) -> bool:
        if control.io_error is not None:
            return False  # nothing is appended after a write error; --resume runs it again
        try:
            writer.append_line(line)
        except OSError as e:
            control.io_error = RunWriteError.from_os_error(e, writer.run_dir / TRIALS)
            control.stop = True
            return False
        return True

    def on_done(batch: list[Item], result: Result) -> None:
        for (case, repeat), (line, failed) in zip(batch, result, strict=True):
            if write(line):
                count(case, repeat, failed)

    def on_lost(item: Item, reason: str) -> None:
        case, repeat = item
        trial = Trial(
            case_id=case.id,
            repeat=repeat,
            failure=Failure(cause="worker_lost", message=reason[:2000]),
        )
        scores = scorers.apply(case, trial)
        if judge is not None:
            scores.update(judge.inconclusive("the trial's worker was lost"))
        if write(_trial_line(trial, recordable_scores(scores), {})):
            count(case, repeat, True)

    drive(
        pool,
        items,
        batch_size=batch_size_for(settings),
        on_done=on_done,
        on_lost=on_lost,
        stop=lambda: control.stop,
        cancel=lambda: control.cancelled,
    )


def run_job_spec(
    agent: Agent, scorers: Scorers, judge: RunJudge | None, settings: RunSettings
) -> JobSpec:
    """Check that the agent, scorers and judge can travel to workers; the job to send.

    Raises InputError naming the first part that cannot (before the run starts)."""
    # imported on first use, so that importing this module stays light
    from agenteval.executors import prepare

    user = getattr(agent, "user", None)  # a ConversationAgent's simulated user
    if user is not None:  # named apart, before the agent that holds it
        # imported on first use, so that importing this module stays light
        from agenteval.conversation.users import check_sendable

        check_sendable(user)
    job = RunJob(agent, scorers, judge, settings.timeout_s, settings.concurrency)
    target = agent.describe().get("target")
    parts: list[tuple[str, Any]] = [(f"the agent '{target or type(agent).__name__}'", agent)]
    parts += [(f"scorer '{s.name}'", s) for s in scorers.scorers]
    if judge is not None:
        parts.append(("the judge", judge))
    refs = [getattr(agent, "_ref", None), *(s.ref for s in scorers.scorers)]
    return prepare(job, parts, refs)


async def run_on_workers(
    executor: Executor,
    spec: JobSpec,
    items: Iterator[Item],
    *,
    settings: RunSettings,
    scorers: Scorers,
    judge: TrialJudge | None,
    writer: RunWriter,
    progress: RunProgress,
    control: RunControl,
) -> None:
    """Start ``executor``'s workers with ``spec`` and run every item on them (in a thread,
    so that this event loop keeps handling Ctrl-C); the workers are ended on return.

    A worker that cannot start (its import fails in the new process) is an InputError
    and the fresh run, still empty, is removed."""
    # imported on first use, so that importing this module stays light
    from agenteval.errors import InputError
    from agenteval.executors.pool import WorkerStartError

    try:
        pool = await asyncio.to_thread(executor.pool, spec)
    except WorkerStartError as e:
        writer.discard()
        raise InputError(f"a worker could not start: {e}") from None
    try:
        await asyncio.to_thread(
            run_parallel,
            pool,
            items,
            settings=settings,
            scorers=scorers,
            judge=judge,
            writer=writer,
            progress=progress,
            control=control,
        )
    finally:
        await asyncio.to_thread(pool.close)
