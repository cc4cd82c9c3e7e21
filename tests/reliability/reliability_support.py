"""Shared pieces of the reliability suite: a threaded fake endpoint and CLI runners."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agenteval.testing.fake_openai import FakeConfig, FakeServer

HERE = Path(__file__).resolve().parent


class ThreadedFake:
    """A :class:`FakeServer` on 127.0.0.1 in its own thread and event loop.

    ``with ThreadedFake(FakeConfig(...)) as srv:`` gives ``srv.base_url`` and, after the
    requests are done, ``srv.counts()`` (requests by outcome, as the server counted them).
    """

    def __init__(self, config: FakeConfig | None = None) -> None:
        self.config = config or FakeConfig()
        self.server: FakeServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return self.server.base_url

    def counts(self) -> Counter[str]:
        assert self.server is not None
        return Counter(self.server.counts)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def main() -> None:
            self.server = await FakeServer(self.config).start()
            self._stop = asyncio.Event()
            self._ready.set()
            await self._stop.wait()
            await self.server.close()

        loop.run_until_complete(main())
        loop.close()

    def __enter__(self) -> ThreadedFake:
        self._thread.start()
        assert self._ready.wait(20), "fake server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for CLI subprocesses: no colours, unbuffered, tests importable."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra or {})
    return env


def agenteval_cmd(*args: str | os.PathLike[str]) -> list[str]:
    """``[python, -m, agenteval, *args]``."""
    return [sys.executable, "-m", "agenteval", *map(str, args)]


def run_cli(
    *args: str | os.PathLike[str],
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run the real command in a subprocess and wait for it."""
    return subprocess.run(
        agenteval_cmd(*args),
        capture_output=True,
        text=True,
        env=cli_env(env),
        cwd=cwd,
        timeout=timeout,
    )


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write rows as JSON lines; returns ``path``."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_trials(run_dir: Path) -> list[dict[str, Any]]:
    """Every line of ``trials.jsonl`` parsed as JSON (a torn line raises)."""
    lines = (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Relative path -> content of every file under ``root``."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def no_traceback(texts: Sequence[str]) -> bool:
    """True when none of ``texts`` shows a Python traceback."""
    return not any("Traceback (most recent call last)" in t for t in texts)


def record_figures(section: str, figures: dict[str, Any]) -> None:
    """Print ``figures`` and, when ``AGENTEVAL_RELIABILITY_FIGURES`` names a file, append them.

    docs/reliability.md quotes the figures of the last run from that file.
    """
    line = json.dumps({"section": section, **figures}, sort_keys=True, default=str)
    print(line)
    target = os.environ.get("AGENTEVAL_RELIABILITY_FIGURES")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")
