"""``judge --processes N`` / ``--executor ray``: workers ask the judge, the driver writes.

Each worker builds its own :class:`~agenteval.judge.Judge` (its own HTTP session and event
loop; the same cache directory) and opens the source run's cases snapshot and trials
itself; a batch is a list of line offsets of the source's ``trials.jsonl``. For each line
the worker judges the trial and returns the new line (the stored scores, the judge's
replacing any of the same name), exactly as the one-process ``agenteval judge`` writes it,
plus what its judge counted for that batch (calls, cache hits, tokens...), which the
driver adds up for the ``judge: ...`` line.

The driver (the one writer) writes the lines in the source's order, so the new
``trials.jsonl`` is the one-process judge's, line for line (but for which trial of a
shared prompt is the call and which the cache hit: docs/scale.md). At most ``4 * workers``
batches are out or waiting to be written: memory stays flat in the number of trials. A
lost worker's batch is judged again, one trial at a time; a trial lost
:data:`~agenteval.executors.driver.MAX_ATTEMPTS` times is written with its judge scores
inconclusive (``the trial's worker was lost``). The source has been validated whole
(:func:`agenteval.cli.judge.run_judge`) before any worker starts.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval._util.loop import new_event_loop
from agenteval.cli.rescore_parallel import _lines
from agenteval.errors import InputError
from agenteval.executors import Executor, prepare
from agenteval.executors.driver import WorkersLostError, drive
from agenteval.executors.pool import JobSpec, WorkerStartError
from agenteval.judge import Judge, JudgeConfig
from agenteval.judge.judge import JudgeStats
from agenteval.rundir import TRIALS, RunWriter, TrialRecord
from agenteval.rundir.cases import RunCases
from agenteval.rundir.trials import _parse_trial_line, _ScoreKey, _trial_line
from agenteval.scoring.score import Score

Item = tuple[int, int, int, bool]
"""A source line (:data:`~agenteval.cli.rescore_parallel.Line`) and whether a lost worker
had it before."""
Result = tuple[list[str], dict[str, int]]
"""The new lines of a batch, in order, and the judge's counters for the batch."""


def judged_scores(rec: TrialRecord, new: dict[str, Score]) -> dict[str, Score]:
    """The scores of the new line: the stored ones, the judge's replacing the same names
    (the one-process judge and the workers write the same line)."""
    scores = dict(rec.scores)
    scores.update(new)
    return scores


def batch_size_for(config: JudgeConfig) -> int:
    """Trials per batch: what the one-process judge keeps in flight (two rounds of
    ``--judge-concurrency``, at least 4)."""
    return max(4, 2 * config.concurrency)


@dataclass
class JudgeJob:
    """One worker's judge and the source run (see the module docstring)."""

    src: str
    config: JudgeConfig
    since: float
    """When the judging started: see :attr:`agenteval.judge.Judge.claim_since`."""
    _judge: Any = field(default=None, repr=False)
    _loop: Any = field(default=None, repr=False)
    _cases: Any = field(default=None, repr=False)
    _fh: Any = field(default=None, repr=False)
    _parsed: dict[tuple[Any, ...], Score] = field(default_factory=dict, repr=False)
    _frags: dict[_ScoreKey, str] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {"src": self.src, "config": self.config, "since": self.since}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def setup(self) -> None:
        """Open the source, start the judge's HTTP session on this worker's event loop."""
        self._loop = new_event_loop()
        self._cases = RunCases(self.src)
        self._fh = open(Path(self.src) / TRIALS, "rb")  # noqa: SIM115 - the worker's life
        self._judge = Judge(self.config)
        self._loop.run_until_complete(self._judge.start())

    def __call__(self, batch: list[Item]) -> Result:
        # a lost worker's trial: what it paid for (and cached) is recorded as the call it was
        self._judge.claim_since = self.since if batch[0][3] else None
        before = self._judge.stats.to_dict()
        lines = self._loop.run_until_complete(self._batch(batch))
        after = self._judge.stats.to_dict()
        return lines, {k: after[k] - before[k] for k in after}

    async def _batch(self, batch: list[Item]) -> list[str]:
        recs = [read_record(self._fh, self.src, item, self._parsed) for item in batch]
        judge = self._judge
        new = await asyncio.gather(*(judge.score(self._cases.get(r.case_id), r) for r in recs))
        return [
            _trial_line(rec, judged_scores(rec, s), self._frags)
            for rec, s in zip(recs, new, strict=True)
        ]

    def close(self) -> None:
        """Close the judge's session and the files (a worker asked to end)."""
        if self._loop is None:
            return
        self._loop.run_until_complete(self._judge.close())
        self._loop.close()
        self._fh.close()
        self._cases.close()


def read_record(fh: Any, src: str, item: Item, parsed: dict[tuple[Any, ...], Score]) -> TrialRecord:
    """The trial at ``item`` (line number, offset, length) of the source's trials file."""
    lineno, offset, length, _ = item
    fh.seek(offset)
    return _parse_trial_line(fh.read(length), str(Path(src) / TRIALS), lineno, parsed)


def judge_job_spec(src: Path, config: JudgeConfig) -> JobSpec:
    """Check that the judge's settings can travel to workers; the job to send. InputError
    (one line) before anything is written when they cannot."""
    job = JudgeJob(str(src), config, time.time())
    return prepare(job, [("the judge's settings", config)], [])


def judge_parallel(
    src: Path, writer: RunWriter, judge: Judge, executor: Executor, spec: JobSpec
) -> None:
    """Judge every trial of ``src`` on ``executor``'s workers into ``writer``, in the
    source's order; the workers' counters are added to ``judge.stats``. Raises
    :class:`~agenteval.executors.driver.WorkersLostError` when every worker was lost."""
    try:
        pool = executor.pool(spec, depth=2)
    except WorkerStartError as e:
        raise InputError(f"a worker could not start: {e}") from None
    batch = batch_size_for(judge.config)
    order: deque[int] = deque()  # line numbers handed out and not yet written, in order
    waiting: dict[int, str] = {}  # judged, waiting for an earlier line to be written
    parsed: dict[tuple[Any, ...], Score] = {}

    def read() -> Iterator[Item]:
        for lineno, offset, length in _lines(src / TRIALS):
            order.append(lineno)
            yield lineno, offset, length, False

    def flush() -> None:
        while order and order[0] in waiting:
            writer.append_line(waiting.pop(order.popleft()))

    def on_done(items: list[Item], result: Result) -> None:
        lines, counts = result
        _add(judge.stats, counts)
        for (lineno, *_), line in zip(items, lines, strict=True):
            waiting[lineno] = line
        flush()

    def on_lost(item: Item, reason: str) -> None:
        with open(src / TRIALS, "rb") as fh:
            rec = read_record(fh, str(src), item, parsed)
        scores = judged_scores(rec, judge.inconclusive("the trial's worker was lost"))
        waiting[item[0]] = _trial_line(rec, scores, {})
        flush()

    try:
        drive(
            pool,
            read(),
            batch_size=batch,
            on_done=on_done,
            on_lost=on_lost,
            admit=lambda: len(order) < 4 * batch * pool.size,
            again=lambda item: (*item[:3], True),
        )
    except WorkersLostError as e:  # the new run is removed: nothing to resume
        head = e.message.split(";")[0]
        raise WorkersLostError(f"{head}; the new run was removed: judge again") from None
    finally:
        pool.close()


def _add(stats: JudgeStats, counts: dict[str, int]) -> None:
    for name, n in counts.items():
        setattr(stats, name, getattr(stats, name) + n)
