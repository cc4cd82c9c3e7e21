"""Runs started by the MCP server (only with ``--allow-run``): ``agenteval run`` in a child.

Each run is a child process ``python -m agenteval run DATASET --agent TARGET --out DIR``
(the same Session, flags and exit codes as the command line), started in the directory the
server was started in. A child, not a thread: the agent's module is imported afresh for
every run, so a run started after editing the agent runs the edited code, and whatever the
agent prints or however it crashes, the server keeps answering. Its output goes to a
temporary log; the last line of it is the error reported when the run fails.

Jobs still running when the server stops are stopped as two Ctrl-C would (SIGTERM twice):
the trials finished are kept and summarised, ``agenteval run --resume`` continues the run.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agenteval._util.untrusted import strip_unsafe
from agenteval.errors import FieldName, InputError, NamedText
from agenteval.mcp_server.paths import check_regular, dataset_file, new_run_dir, relative_parts

_MODULE_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_FILE_TARGET = re.compile(r"(?P<file>[^:]+\.py):(?P<fn>[A-Za-z_]\w*)")
MAX_WAIT_S = 600.0
"""Longest a ``start_run`` call waits for its run to finish."""
REFUSED = NamedText("starting runs is off: the server was started without ", FieldName("allow_run"))
"""The error of ``start_run`` when runs are off, naming the setting ``allow_run`` (the
command line says its flag: :func:`agenteval.mcp_server.server.build_server`'s ``names``)."""


@dataclass
class Job:
    """One run started by the server."""

    run: str
    out: Path
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    started: float = field(default_factory=time.monotonic)

    def status(self) -> dict[str, Any]:
        """``running``, or ``done`` with the exit code (0 ok, 2 unusable input, 4 no
        answers or too many failures, ...) and, unless 0, the run's last output line."""
        rc = self.proc.poll()
        out: dict[str, Any] = {"run": self.run, "pid": self.proc.pid}
        if rc is None:
            return out | {
                "state": "running",
                "elapsed_s": round(time.monotonic() - self.started, 1),
            }
        out |= {"state": "done", "exit_code": rc, "run_dir_exists": self.out.is_dir()}
        if rc != 0:
            out["message"] = self._last_line() or f"agenteval run exited with {rc}"
        return out

    def _last_line(self) -> str:
        try:
            self.log.seek(0, 2)
            size = self.log.tell()
            self.log.seek(max(0, size - 8192))
            tail = self.log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
        return strip_unsafe(lines[-1])[:1000] if lines else ""


def agent_target(text: str, root: Path) -> str:
    """The ``--agent`` value for ``text``: ``path/to/file.py:function`` (a name ending in
    ``.py``) with the file checked inside the runs folder, made absolute; else
    ``package.module:function`` as given."""
    if not isinstance(text, str) or not text:
        raise InputError("agent is empty: give package.module:function or file.py:function")
    m = _FILE_TARGET.fullmatch(text)
    if m is None:
        if _MODULE_TARGET.fullmatch(text):
            return text
        raise InputError(
            f"agent {text!r} is not package.module:function nor path/to/file.py:function"
        )
    parts = relative_parts(m["file"], "agent file")
    real = check_regular(root.joinpath(*parts), root, f"agent file {m['file']!r}")
    return f"{real}:{m['fn']}"


class Jobs:
    """The runs this server started (see the module doc); ``allowed`` is ``--allow-run``."""

    def __init__(self, root: Path, *, allowed: bool) -> None:
        self.root = root
        self.allowed = allowed
        self.jobs: dict[str, Job] = {}

    def start(
        self,
        dataset: str,
        agent: str,
        name: str | None = None,
        limit: int | None = None,
        repeats: int = 1,
        concurrency: int = 4,
        timeout_s: float | None = None,
    ) -> Job:
        """Check the arguments and start the run; InputError (nothing started) when they
        are bad or runs are not allowed."""
        if not self.allowed:
            raise InputError(REFUSED.parts)
        data = dataset_file(dataset, self.root)
        target = agent_target(agent, self.root)
        if name is None or name == "":
            name = time.strftime("mcp-%Y%m%d-%H%M%S", time.gmtime())
            base, n = name, 1
            while (self.root / name).exists() or name in self.jobs:
                n += 1
                name = f"{base}-{n}"
        out = new_run_dir(name, self.root)
        if limit is not None and limit < 1:
            raise InputError(f"limit must be 1 or more, got {limit}", field="limit")
        if not 1 <= repeats <= 100:
            raise InputError(f"repeats must be within 1..100, got {repeats}", field="repeats")
        if not 1 <= concurrency <= 64:
            raise InputError(
                f"concurrency must be within 1..64, got {concurrency}", field="concurrency"
            )
        if timeout_s is not None and not timeout_s > 0:
            raise InputError(f"timeout_s must be > 0, got {timeout_s}", field="timeout_s")
        argv = [sys.executable, "-m", "agenteval", "run", str(data), "--agent", target]
        argv += ["--out", str(out), "--quiet", "--concurrency", str(concurrency)]
        argv += ["--repeats", str(repeats)]
        if limit is not None:
            argv += ["--limit", str(limit)]
        if timeout_s is not None:
            argv += ["--timeout", str(timeout_s)]
        log = tempfile.TemporaryFile(prefix="agenteval-mcp-run-")  # noqa: SIM115 - the job's
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        except OSError as e:
            log.close()
            raise InputError(f"cannot start agenteval run ({e.strerror or e})") from None
        run_id = out.relative_to(self.root).as_posix()
        job = Job(run=run_id, out=out, proc=proc, log=log)
        self.jobs[run_id] = job
        return job

    def close(self, first_s: float = 1.0, then_s: float = 4.0) -> None:
        """Stop every run still going as Ctrl-C twice would: SIGTERM (no new trials), after
        ``first_s`` SIGTERM again (trials in flight recorded as cancelled, the summary
        written), after ``then_s`` more SIGKILL. A client waits only so long for a server
        to exit."""
        running = [j for j in self.jobs.values() if j.proc.poll() is None]
        for wait_s in (first_s, then_s):
            for j in running:
                if j.proc.poll() is None:
                    with contextlib.suppress(OSError):
                        j.proc.terminate()
            deadline = time.monotonic() + wait_s
            for j in running:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    j.proc.wait(max(0.0, deadline - time.monotonic()))
        for j in running:
            if j.proc.poll() is None:
                with contextlib.suppress(OSError):
                    j.proc.kill()
                j.proc.wait()
        for j in self.jobs.values():
            with contextlib.suppress(OSError):
                j.log.close()
