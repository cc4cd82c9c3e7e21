"""A :class:`~agenteval.executors.pool.Pool` of Ray actors (``--executor ray``).

Each worker is a Ray actor (one CPU) that builds the job once and then computes one batch
at a time, like a local worker process. ``address`` None starts a local Ray instance with
``size`` CPUs (ended again on :meth:`RayPool.close`); otherwise the pool connects to that
cluster (``127.0.0.1:6379``, ``ray://head:10001``, ``auto``) and leaves it running. An
actor that dies (its process killed, its node lost) gives a
:class:`~agenteval.executors.pool.Lost` event for its batch and is replaced. Ray is
imported only here, when this executor is asked for (extra ``ray``).

What the actors import must be importable on the cluster's nodes: on this machine the
driver's ``PYTHONPATH`` is inherited by a local instance; for a remote cluster pass a
``runtime_env`` (``{"working_dir": ".", "pip": [...]}``, see docs/scale.md).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

from agenteval.errors import FieldName, InputError
from agenteval.executors.pool import Done, Event, JobError, JobSpec, Lost, WorkerStartError


class _Actor:
    """The body of one Ray actor: the job, built by :meth:`ready`."""

    def __init__(self, spec: JobSpec) -> None:
        self._spec = spec
        self._job: Any = None

    def ready(self) -> int:
        """Build the job; the actor's process id (raises what the build raised)."""
        self._job = self._spec.build()
        return os.getpid()

    def run(self, batch: Any) -> Any:
        try:
            return self._job(batch)
        except Exception as e:  # a bug in the job: reported as one line
            return JobError(" ".join(f"{type(e).__name__}: {e}".split())[:500])


@dataclass(slots=True)
class _Slot:
    actor: Any
    pid: int
    batch: int | None = None
    ref: Any = None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(
            (FieldName("executor"), " ray needs Ray: pip install -e '.[ray]'"), field="executor"
        ) from None
    return ray


class RayPool:
    """``size`` Ray actors (default: the cluster's CPUs); see the module docstring."""

    def __init__(
        self,
        spec: JobSpec,
        size: int | None,
        address: str | None,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        ray = self._ray = _import_ray()
        self._owns = False
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": "ERROR",
                "log_to_driver": True,
                "runtime_env": runtime_env,
            }
            if address:
                options["address"] = address
            else:
                options["num_cpus"] = size or os.cpu_count() or 1
            try:
                ray.init(**options)
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = address or "a local Ray instance"
                message = " ".join(str(e).split())[:300]
                raise InputError(
                    f"cannot connect to {where}: {message}", field="ray_address"
                ) from None
            self._owns = True
        self.size = size or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._spec = spec
        self._cls = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_Actor)
        self._slots: list[_Slot] = []
        try:
            actors = [self._cls.remote(spec) for _ in range(self.size)]
            pids = self._ready(actors)
            self._slots = [_Slot(a, p) for a, p in zip(actors, pids, strict=True)]
        except BaseException:
            self.close()
            raise

    def _ready(self, actors: list[Any]) -> list[int]:
        ray = self._ray
        try:
            return list(ray.get([a.ready.remote() for a in actors]))
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if getattr(e, "cause", None) is not None else e
            message = getattr(cause, "message", None) or str(cause)
            raise WorkerStartError(" ".join(str(message).split())[:500]) from None
        except ray.exceptions.RayError as e:
            raise WorkerStartError(
                f"a Ray actor died while starting ({type(e).__name__})"
            ) from None

    def idle(self) -> int:
        return sum(1 for s in self._slots if s.batch is None)

    def submit(self, batch_id: int, batch: Any) -> None:
        slot = next(s for s in self._slots if s.batch is None)
        slot.batch = batch_id
        slot.ref = slot.actor.run.remote(batch)

    def wait(self, timeout: float) -> list[Event]:
        ray = self._ray
        busy = {s.ref: s for s in self._slots if s.batch is not None}
        if not busy:
            return []
        ready, rest = ray.wait(list(busy), num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        events: list[Event] = []
        for ref in ready:
            slot = busy[ref]
            batch_id = slot.batch
            assert batch_id is not None
            try:
                result = ray.get(ref)
            except ray.exceptions.RayTaskError as e:  # not a lost actor: the job raised
                events.append(Done(batch_id, JobError(" ".join(str(e).split())[:500])))
                slot.batch, slot.ref = None, None
                continue
            except ray.exceptions.RayError as e:  # the actor or its node is gone
                events.append(self._replace(slot, type(e).__name__))
                continue
            slot.batch, slot.ref = None, None
            events.append(Done(batch_id, result))
        return events

    def _replace(self, slot: _Slot, how: str) -> Lost:
        batch_id = slot.batch
        assert batch_id is not None
        old = slot.pid
        actor = self._cls.remote(self._spec)
        (pid,) = self._ready([actor])
        slot.actor, slot.pid, slot.batch, slot.ref = actor, pid, None, None
        return Lost(batch_id, f"Ray actor (process {old}) was lost: {how}")

    def worker_pids(self) -> list[int]:
        return [s.pid for s in self._slots]

    def close(self) -> None:
        ray = self._ray
        for slot in self._slots:
            with contextlib.suppress(Exception):  # already dead, or the cluster is gone
                ray.kill(slot.actor)
        self._slots = []
        if self._owns:
            ray.shutdown()
            self._owns = False
