"""The driver loop on a real local pool: bounded read-ahead, order-free results, stop."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval.executors.driver import drive
from agenteval.executors.pool import JobSpec, LocalPool, WorkerStartError

HERE = Path(__file__).resolve().parent


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalPool]:
    monkeypatch.syspath_prepend(str(HERE))
    from _echo_job import Doubler

    p = LocalPool(JobSpec((), pickle.dumps(Doubler())), 2)
    try:
        yield p
    finally:
        p.close()


def test_read_ahead_is_bounded_by_workers_times_batch(pool: LocalPool) -> None:
    pulled = 0
    done: list[int] = []
    most_ahead = 0

    def items() -> Iterator[int]:
        nonlocal pulled, most_ahead
        for i in range(5000):
            pulled += 1
            most_ahead = max(most_ahead, pulled - len(done))
            yield i

    def on_done(batch: list[int], result: list[int]) -> None:
        assert result == [2 * x for x in batch]
        done.extend(batch)

    drive(pool, items(), batch_size=16, on_done=on_done, on_lost=lambda i, r: None)
    assert sorted(done) == list(range(5000))
    assert most_ahead <= 2 * 16  # never more than one batch per worker out


def test_stop_hands_out_nothing_more(pool: LocalPool) -> None:
    done: list[int] = []
    drive(
        pool,
        iter(range(1000)),
        batch_size=10,
        on_done=lambda b, r: done.extend(b),
        on_lost=lambda i, r: None,
        stop=lambda: len(done) >= 30,
    )
    assert 30 <= len(done) <= 50  # the batches out when it stopped finished, no more


def test_a_worker_that_cannot_import_the_job_is_one_line() -> None:
    spec = JobSpec(("/nonexistent/agent.py:fn",), b"")
    with pytest.raises(WorkerStartError, match="not found"):
        LocalPool(spec, 1)
