"""Small real run folders for the MCP server's tests, and a client of the real server.

:func:`small_folder` writes a 3-case dataset and a file agent (``echo_agent.py:answer``,
right on case m1 only); :func:`write_run` writes a run directory with the library's own
writer; :class:`McpClient` spawns ``python -m agenteval mcp`` and talks to it through the
``mcp`` package's client (stdio_client + ClientSession), from synchronous tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

SMALL_CASES = [
    {"id": "m1", "input": "What is 2+2?", "expected": "4"},
    {"id": "m2", "input": "Capital of France?", "expected": "Paris"},
    {"id": "m3", "input": "Colour of the sky?", "expected": "blue"},
]
ECHO_AGENT = '''"""Right on m1 only."""


def answer(case):
    return "4" if "2+2" in case.input_text() else "no idea"
'''


def small_folder(root: Path) -> Path:
    """``root`` with ``small.jsonl`` and ``echo_agent.py`` in it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "small.jsonl").write_text("".join(json.dumps(c) + "\n" for c in SMALL_CASES))
    (root / "echo_agent.py").write_text(ECHO_AGENT)
    return root


def write_run(
    run_dir: Path, cases: Iterable[Case], trials: Iterable[tuple[Trial, dict[str, Score]]]
) -> Path:
    """A complete run directory (run.json, cases.jsonl, trials.jsonl)."""
    cases = list(cases)
    header = RunHeader(dataset=DatasetRef(path="cases.jsonl", sha256="sha-1", cases=len(cases)))
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, cases)
        for trial, scores in trials:
            w.append(trial, scores)
    return run_dir


def run_cli(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    """The real ``agenteval`` command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def attr(obj: Any, name: str) -> Any:
    """A field of an ``mcp`` result by its mcp 2 name (``is_error``), or its mcp 1 name
    (``isError``): the tests run against either version of the client."""
    if hasattr(obj, name):
        return getattr(obj, name)
    head, *rest = name.split("_")
    return getattr(obj, head + "".join(w.title() for w in rest))


class McpClient:
    """A real ``agenteval mcp`` server process and an MCP client session to it."""

    def __init__(self, portal: Any, session: Any, instructions: str | None = None) -> None:
        self.portal = portal
        self.session = session
        self.instructions = instructions
        """What the server said it is for, at initialisation."""

    def tools(self) -> list[Any]:
        return list(self.portal.call(self.session.list_tools).tools)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """The CallToolResult of one call (10 min at most)."""
        return self.portal.call(self.session.call_tool, name, arguments or {})

    def call_many(self, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        """The CallToolResults of calls made at once (concurrent requests on one session)."""
        import anyio

        out: list[Any] = [None] * len(calls)

        async def one(i: int) -> None:
            out[i] = await self.session.call_tool(*calls[i])

        async def run() -> None:
            async with anyio.create_task_group() as tg:
                for i in range(len(calls)):
                    tg.start_soon(one, i)

        self.portal.call(run)
        return out

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A call that must succeed: its structured content, checked equal to its JSON text."""
        res = self.call(name, arguments)
        assert not attr(res, "is_error"), res.content[0].text
        text = json.loads(res.content[0].text)
        assert text == attr(res, "structured_content")
        return dict(text)

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """A call that must fail: its one-line error text."""
        res = self.call(name, arguments)
        assert attr(res, "is_error"), res
        assert len(res.content) == 1
        text: str = res.content[0].text
        assert "\n" not in text and "Traceback" not in text, text
        return text


@contextlib.contextmanager
def mcp_server(runs: Path, *extra: str, cwd: Path | None = None) -> Iterator[McpClient]:
    """``python -m agenteval mcp --runs RUNS EXTRA...`` as a subprocess, with a session."""
    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agenteval", "mcp", "--runs", str(runs), *extra],
        env=dict(os.environ),
        cwd=str(cwd) if cwd is not None else None,
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(stdio_client(params)) as (read, write),
    ):
        session = ClientSession(read, write)
        with portal.wrap_async_context_manager(session):
            init = portal.call(session.initialize)
            yield McpClient(portal, session, init.instructions)
