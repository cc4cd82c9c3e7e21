"""Start ``python -m agenteval`` for the tests without paying its imports every time.

The suite starts the real command about a thousand times, and most of each start (about
0.5 s of CPU of a 0.8 s ``agenteval run`` on one case) is importing pydantic, aiohttp,
rich and agenteval's own model classes. This module keeps, per pytest worker, one server
process that has imported them once; each ``subprocess.run([sys.executable, "-m",
"agenteval", ...])`` of a test then starts ``tests/forkrun_client.py`` instead, which
hands its streams, arguments, environment, working directory and umask to the server,
and the server forks a process that runs the command with them, through
``runpy._run_module_as_main`` as ``-m`` does, and ends as the interpreter ends (thread
joins, atexit handlers, flushes; :func:`_finish`). Exit codes, signals and the bytes on stdout and
stderr are the command's own. tests/test_forkrun.py holds that for every kind of ending.

Only what can be the same is routed this way (:func:`forked_argv`); everything else is
started for real:

- ``subprocess.run`` only, not ``Popen``: a test that signals or kills a process it
  started, or reads it as it runs, gets a real one;
- exactly ``[sys.executable, "-m", "agenteval", ...]`` (no ``-X``, ``-W``, ``-c``), with
  no ``preexec_fn``, ``pass_fds``, ``shell``, ``user``/``group`` or new session;
- an environment whose ``PYTHON*`` and locale variables are the server's (``PYTHONPATH``
  may add folders, unless one holds a module the server has imported, and
  ``PYTHONUNBUFFERED`` may differ), and a working directory that shadows none of them.

``AGENTEVAL_TEST_FORKRUN=0`` turns it off: every command is then started for real.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).with_name("forkrun_client.py")

# What the server imports before it serves: the libraries and agenteval modules the
# commands the tests start import. (Measured, CPU of a command: a one-case ``agenteval run``
# 0.33 s started for real, 0.09 s forked; ``report`` and ``gate`` ~0.24 s against ~0.07 s.)
PRELOAD = (
    "asyncio",
    "pydantic",
    "aiohttp",
    "yarl",
    "yaml",
    "jinja2",
    "jsonschema",
    "msgspec",
    "orjson",
    "rich.console",
    "rich.table",
    "rich.text",
    "rich.markup",
    "agenteval.cli",
    "agenteval.cli._common",
    "agenteval.cases.case",
    "agenteval.dataset",
    "agenteval.trials.trial",
    "agenteval.summary.model",
    "agenteval.summary.live",
    "agenteval.rundir",
    "agenteval.scoring",
    "agenteval.scorers",
    "agenteval.report",
    "agenteval.gate",
    "agenteval.run",
    "agenteval.llm.http",
    "agenteval.agents.base",
    "agenteval.agents.factory",
    "agenteval.judge",
    "agenteval.traces.importer",
)

_SAME_ENV_PREFIXES = ("PYTHON", "LC_")
# certificates: aiohttp builds its default SSL contexts (reading these) at import
_SAME_ENV_NAMES = frozenset({"LANG", "LANGUAGE", "SSL_CERT_FILE", "SSL_CERT_DIR"})
_FREE_ENV_NAMES = frozenset({"PYTHONPATH", "PYTHONUNBUFFERED"})
_FORWARDED_SIGNAL = struct.Struct(">i")


# --- The server ---------------------------------------------------------------------------


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    conn.sendall(struct.pack(">I", len(body)) + body)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    fds: list[int] = []
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        chunk, got, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
        fds.extend(got)
        if not chunk:
            raise ConnectionError("the client left before its request was read")
        data += chunk
    return json.loads(data[4:]), fds


def _supervise(conn: socket.socket) -> dict[str, Any] | None:
    """In the forked supervisor: fork the command's process and report how it ends.

    Returns the request in the command's process (which then runs it); never returns in
    the supervisor, which exits once the command has ended or its client has gone.
    """
    request, fds = _receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        return request
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    _send(conn, {"pid": pid})
    sel = selectors.DefaultSelector()
    sel.register(pidfd, selectors.EVENT_READ)
    sel.register(conn, selectors.EVENT_READ)
    pending = b""
    while True:
        for key, _ in sel.select():
            if key.fileobj == pidfd:
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    _send(conn, {"status": os.waitstatus_to_exitcode(status)})
                os._exit(0)
            chunk = conn.recv(64)
            if not chunk:  # the client was killed: so is the command
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os._exit(0)
            pending += chunk
            while len(pending) >= _FORWARDED_SIGNAL.size:
                (signum,) = _FORWARDED_SIGNAL.unpack(pending[: _FORWARDED_SIGNAL.size])
                pending = pending[_FORWARDED_SIGNAL.size :]
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signum)


def serve(sock_path: str) -> dict[str, Any]:
    """Import :data:`PRELOAD`, then fork a supervisor for each client until stdin closes.

    Returns (in a command's process only) the request that process is to run.
    """
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    import gc

    # what the server made stays out of every child's garbage collection, whose visits
    # would copy the pages the child shares with the server
    gc.collect()
    gc.freeze()
    if threading.active_count() != 1:
        raise RuntimeError(f"a preloaded module started a thread: {threading.enumerate()}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(128)
    top = sorted({name.partition(".")[0] for name in sys.modules})
    sys.stdout.write(json.dumps({"ready": os.getpid(), "modules": top}) + "\n")
    sys.stdout.flush()
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    sel.register(sys.stdin, selectors.EVENT_READ)
    while True:
        # each supervisor is waited for (not left to SIGCHLD's SIG_IGN), so the CPU of the
        # commands adds up in the pytest worker's children, as if it had started them
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        for key, _ in sel.select(timeout=1.0):
            if key.fileobj is sys.stdin:  # the pytest worker has gone
                listener.close()
                os.unlink(sock_path)
                with contextlib.suppress(ChildProcessError):
                    while True:
                        os.waitpid(-1, 0)
                sys.exit(0)
            conn, _addr = listener.accept()
            if os.fork() == 0:
                sel.close()
                listener.close()
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)
                os.close(devnull)
                request = _supervise(conn)
                if request is not None:
                    return request
                os._exit(0)
            conn.close()


def _run_command(request: dict[str, Any], server_pythonpath: list[str]) -> None:
    """In the command's process: become ``python -m agenteval ARGV`` in its place."""
    import runpy
    import tempfile
    import time
    import types

    cwd = request["cwd"]
    os.chdir(cwd)
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    tempfile.tempdir = None  # found again from TMPDIR at first use, as in a new process
    # sys.path as the interpreter builds it for -m: the working directory, PYTHONPATH,
    # then the installation's own folders (the server's, after its script folder and
    # PYTHONPATH).
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    base = sys.path[1 + len(server_pythonpath) :]
    sys.path[:] = [cwd, *pythonpath, *base]
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    for signum in (signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv[:] = ["-m", *request["argv"]]
    sys.modules["__main__"] = types.ModuleType("__main__")
    code = 0
    try:
        runpy._run_module_as_main("agenteval", alter_argv=True)  # type: ignore[attr-defined]
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except KeyboardInterrupt:  # as the interpreter: the traceback, then die by SIGINT
        sys.excepthook(*sys.exc_info())
        _finish(None, signal.SIGINT)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    _finish(code, None)


def _exit_code(code: object) -> int:
    """The exit status ``raise SystemExit(code)`` gives (a text is printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(code: int | None, signum: int | None) -> None:
    """End as the interpreter ends, without tearing down what the server imported.

    The interpreter waits for non-daemon threads, runs the atexit functions (logging,
    multiprocessing's clean-up) and flushes stdout and stderr, then frees every module;
    that last step is skipped: in a forked process it would copy every page it shares with
    the server to free objects that are gone the moment the process is. (Measured: it
    made a forked ``agenteval --help`` cost 0.17 s of CPU, against 0.04 s started for
    real.)
    """
    import atexit

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if signum is not None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(code if code is not None else 1)


# --- The tests' side ----------------------------------------------------------------------


class ForkServer:
    """One server for this pytest process, started at the first command routed to it."""

    def __init__(self, tmp_root: Path) -> None:
        self._tmp_root = tmp_root
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._failed = False
        self.socket = str(tmp_root / "forkrun.sock")
        self.env: dict[str, str] = {}
        self.modules: frozenset[str] = frozenset()

    def start(self) -> bool:
        with self._lock:
            if self._proc is not None or self._failed:
                return not self._failed
            self.env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            log = open(self._tmp_root / "forkrun.log", "w")  # noqa: SIM115 (kept open)
            proc = subprocess.Popen(
                [sys.executable, __file__, self.socket],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=self.env,
            )
            line = proc.stdout.readline() if proc.stdout else ""
            if not line:
                self._failed = True
                proc.wait()
                return False
            self.modules = frozenset(json.loads(line)["modules"])
            self._proc = proc
            return True

    def stop(self) -> None:
        if self._proc is not None and self._proc.stdin is not None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a command outlived its test: end it all
                self._proc.kill()
                self._proc.wait()

    def forked_argv(self, args: Any, kwargs: Mapping[str, Any]) -> list[str] | None:
        """The client's argv that runs ``args`` forked from the server, or None if it must not."""
        if not isinstance(args, Sequence) or isinstance(args, (str, bytes)):
            return None
        argv = [os.fspath(a) if isinstance(a, os.PathLike) else a for a in args]
        if argv[:3] != [sys.executable, "-m", "agenteval"] or not all(
            isinstance(a, str) for a in argv
        ):
            return None
        for name in ("preexec_fn", "pass_fds", "user", "group", "extra_groups", "process_group"):
            if kwargs.get(name):
                return None
        if kwargs.get("shell") or kwargs.get("start_new_session") or kwargs.get("executable"):
            return None
        if not self.start():
            return None
        env = kwargs.get("env")
        env = dict(os.environ if env is None else env)
        if not self._same_env(env):
            return None
        cwd = kwargs.get("cwd")
        if self._shadows(os.fspath(cwd) if cwd is not None else os.getcwd()):
            return None
        return [sys.executable, "-S", str(CLIENT), self.socket, *argv[3:]]

    def _same_env(self, env: Mapping[str, str]) -> bool:
        names = {
            n for n in {*env, *self.env} if n.startswith(_SAME_ENV_PREFIXES) or n in _SAME_ENV_NAMES
        }
        if any(env.get(n) != self.env.get(n) for n in names - _FREE_ENV_NAMES):
            return False
        # PYTHONPATH may put folders before the server's, if they shadow nothing it imported
        ours = _entries(self.env.get("PYTHONPATH", ""))
        theirs = _entries(env.get("PYTHONPATH", ""))
        added = len(theirs) - len(ours)
        if added < 0 or theirs[added:] != ours:
            return False
        return not any(self._shadows(p) for p in theirs[:added])

    def _shadows(self, folder: str) -> bool:
        try:
            names = os.listdir(folder)
        except OSError:
            return False
        return any(n.removesuffix(".py") in self.modules for n in names)


def _entries(pythonpath: str) -> list[str]:
    return [p for p in pythonpath.split(os.pathsep) if p]


def install(server: ForkServer) -> None:
    """Route this process's ``subprocess.run`` of ``python -m agenteval`` to ``server``."""
    real_run = subprocess.run

    def run(args: Any, *rest: Any, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        forked = server.forked_argv(args, kwargs)
        return real_run(forked if forked is not None else args, *rest, **kwargs)

    run.__wrapped__ = real_run  # type: ignore[attr-defined]
    subprocess.run = run  # type: ignore[assignment]


if __name__ == "__main__":
    _server_pythonpath = _entries(os.environ.get("PYTHONPATH", ""))
    _request = serve(sys.argv[1])
    _run_command(_request, _server_pythonpath)
