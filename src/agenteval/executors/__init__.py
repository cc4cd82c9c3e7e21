"""Where trials are computed: in this process (the default), in local worker processes
(``--processes N``), or on a Ray cluster (``--executor ray [--ray-address ADDR]``).

Workers only compute (call the agent, score, judge) and send finished trial lines back;
the driver process stays the one writer of the run directory, so every guarantee of a run
(one line per trial, lock, fingerprint, resume, Ctrl-C, summary) holds as without workers.
What travels to a worker is pickled; :func:`prepare` checks it before the run starts and
names the first part that cannot be sent (:class:`~agenteval.errors.InputError`).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agenteval._util.imports import _is_file_target
from agenteval.errors import FieldName, InputError

if TYPE_CHECKING:  # the pool (multiprocessing) loads when workers start: ~14 ms of CPU
    from agenteval.executors.pool import Job, JobSpec, Pool  # at the start of every run

KINDS = ("process", "ray")


@dataclass(frozen=True, slots=True)
class Executor:
    """How to run trials on workers.

    ``kind`` ``"process"``: ``processes`` local worker processes (default 2). ``"ray"``:
    one Ray actor per worker on the cluster at ``address`` (``None``: a new local Ray
    instance; ``"auto"``: the cluster this machine belongs to), ``processes`` actors
    (default: the cluster's CPUs), ``runtime_env`` passed to ``ray.init`` (working
    directory and packages for a remote cluster, see docs/scale.md).
    """

    kind: Literal["process", "ray"] = "process"
    processes: int | None = None
    address: str | None = None
    runtime_env: dict[str, Any] | None = field(default=None)

    def pool(self, spec: JobSpec, depth: int = 1) -> Pool:
        """Start the workers, each with the job ``spec`` built once; ``depth`` batches per
        local worker at once (small batches only, see ``LocalPool``)."""
        if self.kind == "ray":
            # imported on first use, so that importing this module stays light
            from agenteval.executors.raypool import RayPool

            return RayPool(spec, self.processes, self.address, self.runtime_env)
        from agenteval.executors.pool import LocalPool  # (start-up: when workers start)

        return LocalPool(spec, self.processes or 2, depth)

    def describe(self) -> str:
        """``2 worker processes``, ``Ray (local), 2 actors``..."""
        if self.kind == "ray":
            where = self.address or "local"
            n = f", {self.processes} actors" if self.processes else ""
            return f"Ray ({where}){n}"
        return f"{self.processes or 2} worker processes"


def resolve(processes: int | None, executor: str | Executor | None) -> Executor | None:
    """The executor the options ask for; None for the in-process default.

    ``processes`` None or 1 without an executor: in this process. An ``executor`` of
    ``"process"`` or ``"ray"`` (or an :class:`Executor`) with ``processes`` workers.
    """
    if isinstance(executor, Executor):
        if processes is not None and executor.processes is None:
            return Executor(executor.kind, processes, executor.address, executor.runtime_env)
        return executor
    if processes is not None and processes < 1:
        raise InputError(f"must be >= 1, got {processes}", field="processes")
    if executor is None or executor == "process":
        if processes is None or processes == 1:
            return None
        return Executor("process", processes)
    if executor == "ray":
        return Executor("ray", processes)
    raise InputError(f"must be one of {', '.join(KINDS)}, got {executor!r}", field="executor")


def prepare(job: Job, parts: Sequence[tuple[str, Any]], refs: Sequence[str | None]) -> JobSpec:
    """Check that every part of ``job`` can travel to a worker; the job as it travels.

    ``parts`` are (label, object) pairs checked one by one, so that the error names the
    first that cannot be pickled (``the agent 'm:agent'``, ``scorer 'x'``, ``the judge``).
    ``refs`` are the import paths of the agent and scorers: those that are files
    (``path/to/file.py:fn``) are imported by each worker before the job is unpickled.
    """
    for label, obj in [*parts, ("the run's settings", job)]:
        try:
            blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # pickle raises TypeError, AttributeError, PicklingError...
            detail = " ".join(str(e).split())[:200]
            raise InputError(
                (
                    f"{label} cannot be sent to worker processes ({type(e).__name__}: {detail});"
                    " make it importable (a module-level function or class), or build it in"
                    " each worker with an agent factory (",
                    FieldName("agent"),
                    " module:make_agent, a function without parameters returning the agent;"
                    " docs/scale.md)",
                )
            ) from None
    from agenteval.executors.pool import JobSpec  # (start-up: when workers start)

    imports = [r for r in refs if r is not None and _is_file_target(r.rpartition(":")[0])]
    return JobSpec(tuple(dict.fromkeys(imports)), blob)  # the job's, pickled last
