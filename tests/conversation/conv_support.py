"""Helpers shared by the conversation tests: CLI subprocess runs and reading run dirs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The subprocess environment: this directory importable, no API keys, no colour."""
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.update({"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    e.update(extra or {})
    return e


def cmd(*args: Any) -> list[str]:
    return [sys.executable, "-m", "agenteval", *map(str, args)]


def run(*args: Any, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``agenteval ARGS`` in a subprocess, waited for."""
    return subprocess.run(cmd(*args), capture_output=True, text=True, env=env(extra), timeout=120)


def write_cases(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def trials(run_dir: Path) -> list[dict[str, Any]]:
    """Every line of trials.jsonl (a torn line raises)."""
    text = (run_dir / "trials.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def by_case(run_dir: Path) -> dict[tuple[str, int], dict[str, Any]]:
    out = {}
    for line in trials(run_dir):
        t = line.get("trial", line)
        out[(t["case_id"], t.get("repeat", 0))] = line
    return out


class ThreadedFake:
    """The fake OpenAI server on 127.0.0.1 in a thread of its own: ``base_url``, and
    ``counts()`` (requests by outcome) once the requests are done."""

    def __init__(self) -> None:
        self.server: Any = None
        self._loop: Any = None
        self._stop: Any = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return str(self.server.base_url)

    def counts(self) -> dict[str, int]:
        return dict(self.server.counts)

    def _serve(self) -> None:
        from agenteval.testing.fake_openai import FakeServer

        async def main() -> None:
            self.server = await FakeServer().start()
            self._stop = asyncio.Event()
            self._ready.set()
            await self._stop.wait()
            await self.server.close()

        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(main())
        self._loop.close()

    def __enter__(self) -> ThreadedFake:
        self._thread.start()
        assert self._ready.wait(20), "fake server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)
