"""Arize Phoenix (``phoenix serve``) as a real tracing backend for the tests: one server
for the whole session (the ``phoenix`` fixture in tests/conftest.py; its tests share one
xdist group, so one worker starts it once).

Phoenix is not in the ``dev`` extra (850 MB; docs/traces.md): ``.ci/run`` installs it in a
venv of its own and sets ``AGENTEVAL_PHOENIX``. Tests that use it run when a ``phoenix``
executable is found (``AGENTEVAL_PHOENIX=/path/to/venv/bin/phoenix``, or ``phoenix`` on
PATH) and are skipped otherwise, saying why. Each test writes to a project of its own
(``openinference.project.name``) or reads only what it sent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

PHOENIX = os.environ.get("AGENTEVAL_PHOENIX") or shutil.which("phoenix")
NOT_INSTALLED = "Phoenix not installed (set AGENTEVAL_PHOENIX to a phoenix executable)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_phoenix(workdir: Path, start_timeout_s: float = 180.0) -> Iterator[str]:
    """Start Phoenix on free ports with a fresh working directory; yield its base URL."""
    assert PHOENIX is not None, NOT_INSTALLED
    port, grpc = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir / "phoenix"),
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_HOST": "127.0.0.1",
    }
    log_path = workdir / "phoenix.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen([PHOENIX, "serve"], env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None, log_path.read_text()[-2000:]
            assert time.monotonic() < deadline, f"phoenix did not start in {start_timeout_s} s"
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(30)
        log.close()
