"""The stand-in for ``python -m agenteval`` that tests/forkrun.py starts instead of it.

``python -S forkrun_client.py SOCKET ARG...`` hands its standard streams, argument list,
environment, working directory and umask to the fork server listening on SOCKET, which
forks a process that runs ``agenteval ARG...`` exactly as ``python -m agenteval`` would,
with those streams as its own. This process then waits, forwards the signals it gets
(SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) to that process, and ends as it ended:
with its exit code, or killed by its signal. If this process is killed, the server kills
the command too.

Standard library only, and only what a ``-S`` interpreter imports at once: it starts in a
few milliseconds.
"""

import array
import contextlib
import json
import os
import signal
import socket
import struct
import sys

_FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def _read_message(conn: socket.socket) -> dict:
    size = b""
    while len(size) < 4:
        chunk = conn.recv(4 - len(size))
        if not chunk:
            raise ConnectionError("the fork server closed the connection")
        size += chunk
    (n,) = struct.unpack(">I", size)
    body = b""
    while len(body) < n:
        chunk = conn.recv(n - len(body))
        if not chunk:
            raise ConnectionError("the fork server closed the connection")
        body += chunk
    return json.loads(body)


def main() -> int:
    sock_path, args = sys.argv[1], sys.argv[2:]
    umask = os.umask(0)
    os.umask(umask)
    request = {"argv": args, "env": dict(os.environ), "cwd": os.getcwd(), "umask": umask}
    body = json.dumps(request).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(sock_path)
    fds = array.array("i", [0, 1, 2])
    conn.sendmsg(
        [struct.pack(">I", len(body)) + body],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())],
    )

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            conn.sendall(struct.pack(">i", signum))

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    _read_message(conn)  # {"pid": ...}: the command has started
    status = _read_message(conn)["status"]
    if status >= 0:
        return int(status)
    signum = -int(status)
    for forwarded in _FORWARDED:
        signal.signal(forwarded, signal.SIG_DFL)
    sys.stdout.flush()
    os.kill(os.getpid(), signum)
    return 128 + signum  # the signal is ignored by whoever started this process


if __name__ == "__main__":
    sys.exit(main())
