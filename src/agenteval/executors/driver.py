"""The driver loop: hand bounded batches to a pool, collect results, survive lost workers.

:func:`drive` reads items lazily, at most ``batch_size`` per batch and as many
batches as the pool has room for (:meth:`Pool.idle`: one per worker, or ``depth``), so the
driver holds at most ``pool.size * depth * batch_size`` items however long the input is
(backpressure). Each result is handed to ``on_done`` in the driver's thread: the
driver is the only writer.

A batch whose worker died (:class:`~agenteval.executors.pool.Lost`) was never answered,
so nothing of it was written: its items run again, one per batch (so that an item that
kills its worker is found alone). An item lost ``max_attempts`` times is handed to
``on_lost`` (the run records it with cause ``worker_lost``) instead of running again. When
``pool.size`` workers die in a row on first attempts, with no batch answered in between,
every worker was lost (the machine or the cluster is taking them): :class:`WorkersLostError`.
Losses of items already retried are not counted: such an item may be what kills its
worker, and it ends as ``worker_lost`` after ``max_attempts``. With one worker, a first
loss is the loss of every worker.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agenteval.errors import EXIT_WORKERS_LOST, AgentEvalError, FieldName
from agenteval.executors.pool import Done, JobError, Lost, Pool, WorkerStartError

T = TypeVar("T")

MAX_ATTEMPTS = 3
"""Times an item is tried on a worker before it is given up as ``worker_lost``."""


class WorkersLostError(AgentEvalError):
    """Every worker was lost (or none could be started again): the run stops, resumable."""

    exit_code = EXIT_WORKERS_LOST

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class JobFailedError(RuntimeError):
    """The job raised in a worker (a bug, not the agent's doing: agents' errors are trials)."""


@dataclass(slots=True)
class _Batch(Generic[T]):
    items: list[T]
    attempts: int = 0


def drive(
    pool: Pool,
    items: Iterator[T],
    *,
    batch_size: int,
    on_done: Callable[[list[T], Any], None],
    on_lost: Callable[[T, str], None],
    stop: Callable[[], bool] = lambda: False,
    cancel: Callable[[], bool] = lambda: False,
    admit: Callable[[], bool] = lambda: True,
    again: Callable[[T], T] = lambda item: item,
    max_attempts: int = MAX_ATTEMPTS,
    poll_s: float = 0.1,
) -> None:
    """Run every item on the pool (see the module docstring).

    ``stop()`` true: no new batch is handed out and the batches out are awaited.
    ``cancel()`` true: return at once (the caller closes the pool, which ends the workers
    holding batches; their items are not recorded). ``admit()`` false: no new item is
    read for now (the caller's own buffer is full). ``again(item)`` is what an item of a
    lost batch is handed out as the next time (the job may need to know it ran before).
    Raises :class:`WorkersLostError`.
    """
    retry: deque[_Batch[T]] = deque()
    out: dict[int, _Batch[T]] = {}
    ids = itertools.count()
    exhausted = False
    lost_in_row = 0
    while True:
        if cancel():
            return
        while not stop() and pool.idle() > 0:
            if retry:
                batch = retry.popleft()
            elif not exhausted and admit():
                chunk = list(itertools.islice(items, batch_size))
                if len(chunk) < batch_size:
                    exhausted = True
                if not chunk:
                    break
                batch = _Batch(chunk)
            else:
                break
            batch_id = next(ids)
            out[batch_id] = batch
            pool.submit(batch_id, batch.items)
        if not out:
            if stop() or (exhausted and not retry):
                return
            if not admit():  # pragma: no cover - the caller drains its buffer in on_done
                continue
        try:
            events = pool.wait(poll_s)
        except WorkerStartError as e:
            raise WorkersLostError(f"a lost worker could not be replaced: {e}") from None
        for event in events:
            batch = out.pop(event.batch_id)
            if isinstance(event, Done):
                if isinstance(event.result, JobError):
                    raise JobFailedError(event.result.message)
                lost_in_row = 0
                on_done(batch.items, event.result)
                continue
            assert isinstance(event, Lost)
            if batch.attempts == 0 and event.counts:  # a retried item may kill its worker
                lost_in_row += 1
            if lost_in_row >= pool.size:
                raise WorkersLostError.named(
                    f"every worker was lost ({lost_in_row} in a row, the last {event.reason});"
                    " the trials written are kept: run again with ",
                    FieldName("resume"),
                    " to continue",
                )
            _requeue(batch, event.reason, retry, on_lost, again, max_attempts)


def _requeue(
    batch: _Batch[T],
    reason: str,
    retry: deque[_Batch[T]],
    on_lost: Callable[[T, str], None],
    again: Callable[[T], T],
    max_attempts: int,
) -> None:
    attempts = batch.attempts + 1
    for item in batch.items:
        if attempts >= max_attempts:
            on_lost(item, f"its worker was lost {attempts} times (the last: {reason})")
        else:
            retry.append(_Batch([again(item)], attempts))
