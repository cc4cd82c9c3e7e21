"""Worker pools: a fixed number of workers, each running one :class:`Job` at a time.

A :class:`Job` is built once per worker (:meth:`Job.setup`: import the agent, build it,
open its connections) and then called with one batch at a time. The driver hands a batch
to a free worker with :meth:`Pool.submit` and collects :class:`Done` or :class:`Lost`
events with :meth:`Pool.wait`. A worker that dies (SIGKILL, OOM killer, a lost Ray node)
gives one :class:`Lost` event for the batch it held and is replaced by a new worker.

:class:`LocalPool` runs workers as local processes started with ``forkserver`` (``spawn``
where there is no forkserver): never ``fork``, because the driver has threads (the event
loop, an agent's threads) and forking a threaded process can deadlock the child; with
``forkserver`` the workers are forked from a small clean server process, so a replacement
starts in milliseconds, and the contract is the one of ``spawn`` and of Ray: what a worker
gets is pickled. Workers ignore SIGINT: Ctrl-C in a terminal reaches the whole process
group, and only the driver decides what stops (it ends the workers itself). A worker whose
driver is gone (its pipe closed) exits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, Protocol


class Job(Protocol):
    """What a worker runs: set up once, then one batch per call."""

    def setup(self) -> None:
        """Build what the worker keeps between batches (called once, in the worker)."""
        ...

    def __call__(self, batch: Any) -> Any:
        """Compute one batch; the result goes back to the driver (pickled)."""
        ...


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A job as it travels to a worker: the user files to import first, then the job.

    ``imports`` are ``path/to/file.py:attr`` targets: such a file is imported under a
    private module name (:mod:`agenteval._util.imports`), which a fresh worker only knows once
    it imported the file too; ``blob`` is the pickled :class:`Job`.
    """

    imports: tuple[str, ...]
    blob: bytes

    def build(self) -> Job:
        """Import the files, unpickle the job and set it up (in the worker)."""
        # imported on first use, so that importing this module stays light
        from agenteval._util.imports import load_callable

        for target in self.imports:
            load_callable(target, what="import", option=None)
        job: Job = pickle.loads(self.blob)
        job.setup()
        return job


@dataclass(frozen=True, slots=True)
class Done:
    """A batch came back: ``result`` is what the job returned for it."""

    batch_id: int
    result: Any


@dataclass(frozen=True, slots=True)
class Lost:
    """The worker holding this batch died before answering (``reason`` says how)."""

    batch_id: int
    reason: str
    counts: bool = True
    """False for the second and later batches queued on the same lost worker (one loss)."""


Event = Done | Lost


class Pool(Protocol):
    """A fixed number of workers; the driver keeps at most :attr:`size` batches out."""

    size: int

    def idle(self) -> int:
        """Workers without a batch."""
        ...

    def submit(self, batch_id: int, batch: Any) -> None:
        """Give ``batch`` to an idle worker (the caller checks :meth:`idle` first)."""
        ...

    def wait(self, timeout: float) -> list[Event]:
        """The batches that came back or were lost, within ``timeout`` seconds."""
        ...

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers (local pools; empty when unknown)."""
        ...

    def close(self) -> None:
        """End every worker (those with a batch too) and wait for them."""
        ...


class WorkerStartError(Exception):
    """A worker could not build its job (the message is the worker's one-line error)."""


@dataclass(frozen=True, slots=True)
class JobError:
    """What a worker sends back instead of a result when the job raised (one line)."""

    message: str


def _worker_main(conn: Connection, spec: JobSpec) -> None:
    """A local worker: build the job, answer ``("ok", job)``, then compute batches."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what Ctrl-C stops
    try:
        job = spec.build()
    except BaseException as e:  # reported to the driver as one line
        conn.send(("error", _one_line(e)))
        return
    conn.send(("ok", None))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the driver is gone
            return
        if msg is None:  # the driver is done: let the job close what it opened
            close = getattr(job, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
            return
        batch_id, batch = msg
        try:
            result: Any = job(batch)
        except Exception as e:  # a bug in the job: the driver reports it as one line
            result = JobError(_one_line(e))
        conn.send((batch_id, result))


def _one_line(e: BaseException) -> str:
    message = getattr(e, "message", None) or str(e)
    text = f"{type(e).__name__}: {message}" if type(e).__name__ != "InputError" else message
    return " ".join(str(text).split())[:500]


def _context() -> BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["agenteval.executors.pool", "agenteval.run.runner"])
        return ctx
    return multiprocessing.get_context("spawn")


@dataclass(slots=True)
class _Slot:
    proc: BaseProcess
    conn: Connection
    batches: list[int] = field(default_factory=list)


class LocalPool:
    """``size`` local worker processes (see the module docstring).

    Starting the pool waits until every worker has built its job; a worker that cannot
    (its import fails in the new process) raises :class:`WorkerStartError` with its line.
    """

    def __init__(self, spec: JobSpec, size: int, depth: int = 1) -> None:
        self.size = size
        self.depth = depth
        """Batches a worker holds at once (one computing, the rest queued in its pipe): more
        than 1 only for small batches, which a full pipe never blocks."""
        self._spec = spec
        self._ctx = _context()
        self._slots: list[_Slot] = []
        try:
            for _ in range(size):
                self._slots.append(self._start())
            for slot in self._slots:
                self._handshake(slot)
        except BaseException:
            self.close()
            raise

    def _start(self) -> _Slot:
        ours, theirs = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(  # type: ignore[attr-defined]
            target=_worker_main, args=(theirs, self._spec), daemon=True, name="agenteval-worker"
        )
        proc.start()
        theirs.close()
        return _Slot(proc, ours)

    def _handshake(self, slot: _Slot) -> None:
        try:
            kind, detail = slot.conn.recv()
        except (EOFError, OSError):
            code = slot.proc.exitcode
            raise WorkerStartError(f"a worker process died while starting (exit {code})") from None
        if kind == "error":
            raise WorkerStartError(str(detail))

    def idle(self) -> int:
        return sum(self.depth - len(s.batches) for s in self._slots)

    def submit(self, batch_id: int, batch: Any) -> None:
        slot = min(self._slots, key=lambda s: len(s.batches))
        assert len(slot.batches) < self.depth
        slot.batches.append(batch_id)
        # a dead worker: wait() sees its sentinel and reports the batch lost
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, EOFError):
            slot.conn.send((batch_id, batch))

    def wait(self, timeout: float) -> list[Event]:
        busy = [s for s in self._slots if s.batches]
        if not busy:
            return []
        handles: list[Any] = [s.conn for s in busy] + [s.proc.sentinel for s in busy]
        ready = set(wait(handles, timeout))
        events: list[Event] = []
        for slot in busy:
            if slot.conn in ready:
                try:
                    while slot.batches and slot.conn.poll(0):
                        batch_id, result = slot.conn.recv()
                        assert batch_id == slot.batches[0]
                        slot.batches.pop(0)
                        events.append(Done(batch_id, result))
                except (EOFError, OSError):
                    events.extend(self._replace(slot))
                    continue
            if slot.batches and slot.proc.sentinel in ready and not slot.proc.is_alive():
                events.extend(self._replace(slot))
        return events

    def _replace(self, slot: _Slot) -> list[Lost]:
        """The worker in ``slot`` died: report its batches, start a new worker in its place."""
        old_pid = slot.proc.pid
        slot.proc.join(timeout=5)
        code = slot.proc.exitcode
        how = (
            f"killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exit {code}"
        )
        slot.conn.close()
        lost = [
            Lost(b, f"worker process {old_pid} was {how}", counts=i == 0)
            for i, b in enumerate(slot.batches)
        ]
        new = self._start()
        self._handshake(new)  # a failure here means workers cannot start any more
        slot.proc, slot.conn, slot.batches = new.proc, new.conn, []
        return lost

    def worker_pids(self) -> list[int]:
        return [s.proc.pid for s in self._slots if s.proc.pid is not None and s.proc.is_alive()]

    def close(self) -> None:
        for slot in self._slots:
            with contextlib.suppress(OSError, ValueError):
                if not slot.batches:
                    slot.conn.send(None)
        for slot in self._slots:
            if slot.batches:  # computing: nobody waits for its answer any more
                with contextlib.suppress(OSError, ValueError):
                    slot.proc.kill()
        for slot in self._slots:
            slot.proc.join(timeout=5)
            if slot.proc.is_alive():
                slot.proc.kill()
                slot.proc.join(timeout=5)
            with contextlib.suppress(OSError):
                slot.conn.close()
        self._slots = []


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
