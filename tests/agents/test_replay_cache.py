"""The replay cache end to end: a tool-loop run re-run against a stopped upstream.

The upstream is the fake OpenAI-compatible server on 127.0.0.1, run on its own event loop
in a thread so that its request counters can be read. After the first run it is stopped and
a bare listening socket takes its port: any request of the re-run would connect to it, so
counting its connections counts the re-run's requests (none may arrive).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.cli import main
from agenteval.rundir import iter_trials, read_header
from agenteval.testing.fake_openai import FakeServer

N_CASES = 50
TOOLS = '''
def lookup(query: str) -> str:
    """Look a word up.

    Args:
        query: the word
    """
    return f"found {query}"
'''


class ThreadServer:
    """The fake server on its own loop in a thread; ``stop()`` closes it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = FakeServer()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)

    @property
    def requests(self) -> int:
        return sum(self.server.counts.values())

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def upstream() -> Iterator[ThreadServer]:
    srv = ThreadServer()
    try:
        yield srv
    finally:
        if srv.thread.is_alive():
            srv.stop()


def _listener(port: int) -> socket.socket:
    """A socket listening on ``port`` that never answers: it only counts connections."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(128)
    s.setblocking(False)
    return s


def _connections(s: socket.socket) -> int:
    n = 0
    while True:
        try:
            conn, _ = s.accept()
        except BlockingIOError:
            return n
        conn.close()
        n += 1


def _dataset(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    with path.open("w") as f:
        for i in range(N_CASES):
            call = json.dumps({"query": f"w{i}"})
            case = {
                "id": f"c{i}",
                "input": f"look up w{i} [[call:lookup {call}]]",
                "expected": f"echo: found w{i}",
            }
            f.write(json.dumps(case) + "\n")
    (tmp_path / "tools.py").write_text(TOOLS)
    return path


def _run(tmp_path: Path, url: str, out: str, *extra: str) -> int:
    return main(
        [
            "run",
            str(_dataset(tmp_path)),
            "--agent",
            "tool-loop",
            "--endpoint",
            url,
            "--model",
            "gpt-4o-mini",
            "--tools",
            str(tmp_path / "tools.py"),
            "--max-retries",
            "0",
            "--out",
            str(tmp_path / out),
            "--quiet",
            *extra,
        ]
    )


_VARYING = {"latency", "started_at", "cached", "scores"}


def _observed(run: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Each trial without what differs between two runs of one agent: times, and the
    record of which calls the cache served."""
    out = {}
    for t in iter_trials(run):
        d = t.model_dump(mode="json", exclude=_VARYING)
        for c in d["tool_calls"]:
            c.pop("started_at", None)
            c.pop("duration_s", None)
        out[t.key] = {**d, "scores": {k: s.value for k, s in t.scores.items()}}
    return out


def test_a_fully_cached_rerun_sends_nothing_and_gives_identical_trials(
    tmp_path: Path, upstream: ThreadServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = str(tmp_path / "cache")
    assert _run(tmp_path, upstream.server.base_url, "first", "--cache", cache) == 0
    assert upstream.requests == 2 * N_CASES  # a tool call, then the answer
    port = upstream.server.port
    upstream.stop()
    listener = _listener(port)
    try:
        assert _run(tmp_path, f"http://127.0.0.1:{port}/v1", "again", "--cache", cache) == 0
        assert _connections(listener) == 0  # no request reached the (stopped) upstream
    finally:
        listener.close()

    first, again = _observed(tmp_path / "first"), _observed(tmp_path / "again")
    assert again == first
    assert all(t["output"] == f"echo: found w{t['case_id'][1:]}" for t in first.values())
    assert all(t["scores"]["exact_match"] == 1.0 for t in again.values())
    replayed = list(iter_trials(tmp_path / "again"))
    assert all(len(t.cached) == 2 and t.latency.active_s is None for t in replayed)
    assert all(not t.cached for t in iter_trials(tmp_path / "first"))

    s1 = read_header(tmp_path / "first").summary
    s2 = read_header(tmp_path / "again").summary
    assert s1 is not None and s2 is not None
    assert "cache" not in s1  # nothing was cached in the first run
    c = s2["cache"]
    assert c["calls"] == 2 * N_CASES and c["trials"] == N_CASES
    assert c["usd"] == pytest.approx(s2["cost"]["agent_usd"]) and c["usd"] > 0
    assert c["paid_agent_usd"] == 0.0
    assert s2["cost"]["agent_usd"] == pytest.approx(s1["cost"]["agent_usd"])
    assert c["cached_latency"]["n"] == N_CASES and c["live_latency"]["n"] == 0


def test_read_only_calls_on_a_miss_and_writes_nothing(
    tmp_path: Path, upstream: ThreadServer
) -> None:
    cache = tmp_path / "cache"
    url = upstream.server.base_url
    assert _run(tmp_path, url, "ro", "--cache", str(cache), "--cache-mode", "read-only") == 0
    assert upstream.requests == 2 * N_CASES
    assert not cache.exists() or not any(cache.rglob("*.json"))
    assert all(not t.cached for t in iter_trials(tmp_path / "ro"))


def test_refresh_calls_every_time_and_off_ignores_the_cache(
    tmp_path: Path, upstream: ThreadServer
) -> None:
    cache = str(tmp_path / "cache")
    url = upstream.server.base_url
    assert _run(tmp_path, url, "fill", "--cache", cache) == 0
    entries = sorted(p.name for p in Path(cache).rglob("*.json"))
    assert len(entries) == 2 * N_CASES
    assert _run(tmp_path, url, "refresh", "--cache", cache, "--cache-mode", "refresh") == 0
    assert upstream.requests == 4 * N_CASES  # every call made again
    assert sorted(p.name for p in Path(cache).rglob("*.json")) == entries  # overwritten
    assert all(not t.cached for t in iter_trials(tmp_path / "refresh"))
    assert _run(tmp_path, url, "off", "--cache", cache, "--cache-mode", "off") == 0
    assert upstream.requests == 6 * N_CASES
    assert _run(tmp_path, url, "hit", "--cache", cache) == 0
    assert upstream.requests == 6 * N_CASES  # read-write after refresh: all hits


def test_evaluate_takes_a_cache_and_refuses_one_for_a_python_agent(
    tmp_path: Path, upstream: ThreadServer
) -> None:
    from agenteval import evaluate
    from agenteval.agents.openai_chat import OpenAIChatAgent
    from agenteval.errors import InputError
    from agenteval.llm.replay import CacheSettings

    cases = [{"id": f"e{i}", "input": f"q{i}", "expected": f"echo: q{i}"} for i in range(5)]
    url = upstream.server.base_url
    for i in range(2):
        run = evaluate(
            cases, OpenAIChatAgent(url, "m"), out=tmp_path / f"r{i}", cache=tmp_path / "c"
        )
        assert all(len(t.cached) == i for t in run.trials())
    assert upstream.requests == 5
    ro = CacheSettings(tmp_path / "c", "refresh")
    evaluate(cases, OpenAIChatAgent(url, "m"), out=tmp_path / "r2", cache=ro)
    assert upstream.requests == 10
    with pytest.raises(InputError, match="Python agent"):
        evaluate(cases, lambda case: "x", out=tmp_path / "r3", cache=tmp_path / "c")
