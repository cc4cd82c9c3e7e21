"""Shared fixtures."""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

import forkrun

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["pytester"]  # tests/testing/: the pytest plugin, run in a pytest of its own


def run_cli(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``agenteval`` command in a subprocess."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli


# --- Running in parallel (pytest-xdist, ``-n`` in pyproject.toml) -------------------------
#
# Each test gets a TMPDIR of its own, so that a test asserting "nothing left in TMPDIR"
# sees only its own files, whatever the other workers are doing at the same moment. The
# directories are short (AF_UNIX socket paths of forkserver and Ray live under TMPDIR and
# must stay under 108 bytes) and removed when the worker ends.

_TMP_ROOT: Path | None = None
# ``python -m agenteval`` started by subprocess.run is forked from a server that has made
# its imports once (tests/forkrun.py says what is routed and why it is the same command)
_FORK_SERVER: forkrun.ForkServer | None = None
_TMP_SEQ = count()


def pytest_configure(config: pytest.Config) -> None:
    global _TMP_ROOT
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _TMP_ROOT = Path(tempfile.mkdtemp(prefix=f"ae-{worker}-"))
    global _FORK_SERVER
    if os.environ.get("AGENTEVAL_TEST_FORKRUN", "1") != "0":
        _FORK_SERVER = forkrun.ForkServer(_TMP_ROOT)
        forkrun.install(_FORK_SERVER)
    if worker == "main":  # the xdist controller (or a run without -n), before any worker
        _compile_this_checkout()


def _compile_this_checkout() -> None:
    """Byte-compile this checkout's ``src/agenteval`` once, before the tests start it.

    An editable install is not byte-compiled by pip, and with ``PYTHONDONTWRITEBYTECODE``
    set (as on the CI machine) no ``agenteval`` subprocess ever writes its bytecode: each
    of the ~1,000 the suite starts compiled every module it imported, again. Compiled
    here (once, ~0.7 s CPU; a no-op when up to date), they are read, not compiled:
    ``agenteval run`` on one case 0.95 -> 0.77 s CPU, ``agenteval score`` of a bad file
    0.53 -> 0.42 s. Only a package inside this checkout (``__pycache__`` is ignored by
    git); nothing else is written, and the environment is left as it is."""
    spec = importlib.util.find_spec("agenteval")
    origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
    if origin is not None and ROOT in origin.parents:
        compileall.compile_dir(origin.parent, quiet=2)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _FORK_SERVER is not None:
        _FORK_SERVER.stop()
    if _TMP_ROOT is not None:
        shutil.rmtree(_TMP_ROOT, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_tmpdir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    tmp_path_factory.getbasetemp()  # pytest's own base stays where it was
    assert _TMP_ROOT is not None
    own = _TMP_ROOT / str(next(_TMP_SEQ))
    own.mkdir()
    monkeypatch.setenv("TMPDIR", str(own))
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    yield


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Arize Phoenix for the session: its base URL (tests/phoenix_server.py)."""
    from phoenix_server import NOT_INSTALLED, PHOENIX, running_phoenix

    if not PHOENIX:
        pytest.skip(NOT_INSTALLED)
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as base:
        yield base


def pytest_itemcollected(item: pytest.Item) -> None:
    """Tests of a module that share a module-scoped fixture (a browser, a Phoenix or Ray
    server, a reference run) go to one worker (``--dist loadgroup``), so the fixture is
    built once, as in a serial run; every other test is handed out on its own. pytest 9.2
    stopped xdist from applying these groups (pytest-xdist issue 1386; ``dev`` pins
    pytest < 9.2); the mark is set as each test is collected."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return
    shared = any(
        defs[-1].scope in ("class", "module", "package", "session")
        for defs in info.name2fixturedefs.values()
        if defs and defs[-1].baseid  # a fixture of the project's, not a plugin's
    )
    if "phoenix" in info.name2fixturedefs:  # one server for the session: one group
        item.add_marker(pytest.mark.xdist_group("phoenix"))
    elif shared:
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
