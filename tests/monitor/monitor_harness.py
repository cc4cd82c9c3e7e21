"""A monitor served from a thread of the test process, and OTLP bodies to send it."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agenteval.monitor import Monitor, MonitorConfig
from agenteval.monitor.judging import JudgeStage
from agenteval.monitor.serve import serve
from agenteval.scorers.config import ScorerConfig, build_scorers

HERE = Path(__file__).parent


class Served:
    """A running monitor: its endpoint, the Monitor and the lines it said."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor
        self.endpoint = ""
        self.said: list[str] = []


@contextlib.contextmanager
def served(
    config: MonitorConfig,
    *,
    webhook: str | None = None,
    export_otlp: str | None = None,
    judge: JudgeStage | None = None,
    export_phoenix: str | None = None,
) -> Iterator[Served]:
    """Run ``serve`` on its own event loop in a thread until the block ends."""
    scorers = build_scorers(ScorerConfig())
    holder: list[Served] = []
    monitor = Monitor(config, scorers, lambda line: holder[0].said.append(line), judge=judge)
    s = Served(monitor)
    holder.append(s)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready = threading.Event()
    failed: list[BaseException] = []

    def on_ready(endpoint: str) -> None:
        s.endpoint = endpoint
        ready.set()

    def main() -> None:
        try:
            loop.run_until_complete(
                serve(
                    monitor,
                    "127.0.0.1",
                    0,
                    stop,
                    webhook=webhook,
                    export_otlp=export_otlp,
                    export_phoenix=export_phoenix,
                    ready=on_ready,
                    say=s.said.append,
                )
            )
        except BaseException as e:
            failed.append(e)
            ready.set()
        finally:
            loop.close()

    t = threading.Thread(target=main, daemon=True)
    t.start()
    ready.wait(20)
    if failed:
        raise failed[0]
    try:
        yield s
    finally:
        loop.call_soon_threadsafe(stop.set)
        t.join(20)
    if failed:
        raise failed[0]


def post(
    url: str,
    body: bytes,
    ctype: str = "application/json",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """POST ``body``; (status, headers, body) whatever the status."""
    req = urllib.request.Request(url, body, {"Content-Type": ctype, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return str(r.read().decode())


def span(
    trace: int,
    span_id: int,
    parent: int | None = None,
    *,
    name: str = "s",
    start_ns: int | None = None,
    **attrs: Any,
) -> dict[str, Any]:
    """One OTLP/JSON span (hex ids), started at ``start_ns`` (now), lasting 10 ms."""
    now = time.time_ns() if start_ns is None else start_ns
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span_id:016x}",
        "name": name,
        "startTimeUnixNano": str(now),
        "endTimeUnixNano": str(now + 10_000_000),
        "attributes": [{"key": k, "value": {"stringValue": str(v)}} for k, v in attrs.items()],
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def agent_trace(
    trace: int, answer: str = "The answer is 42", start_ns: int | None = None, **attrs: Any
) -> list[dict[str, Any]]:
    """An ``invoke_agent`` root with a prompt and ``answer``, and one tool span under it
    (started at ``start_ns``, default now)."""
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    ask = [{"role": "user", "parts": [{"type": "text", "content": f"question {trace}"}]}]
    root = span(
        trace,
        1,
        name="invoke_agent shop",
        start_ns=start_ns,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": json.dumps(ask),
            "gen_ai.output.messages": json.dumps(reply),
            **attrs,
        },
    )
    tool = span(
        trace,
        2,
        1,
        name="execute_tool lookup",
        start_ns=start_ns,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.id": f"c{trace}",
            "gen_ai.tool.call.arguments": "{}",
            "gen_ai.tool.call.result": '{"answer": 42}',
        },
    )
    return [tool, root]


def otlp_json(spans: list[dict[str, Any]], service: str = "shop") -> bytes:
    """An ExportTraceServiceRequest in OTLP/JSON."""
    doc = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                },
                "scopeSpans": [{"spans": spans}],
            }
        ]
    }
    return json.dumps(doc).encode()


def gzipped(body: bytes) -> bytes:
    return gzip.compress(body)


def wait_for(check: Callable[[], bool], timeout: float = 15.0, what: str = "it") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def trial_lines(run_dir: Path) -> list[dict[str, Any]]:
    """The complete lines of a window's trials.jsonl, parsed."""
    p = run_dir / "trials.jsonl"
    if not p.exists():
        return []
    data = p.read_bytes()
    return [json.loads(x) for x in data[: data.rfind(b"\n") + 1].splitlines() if x.strip()]


def all_trials(out: Path) -> list[dict[str, Any]]:
    return [t for d in sorted(out.iterdir()) if not d.name.startswith(".") for t in trial_lines(d)]


PAGE = HERE.parents[1] / "docs" / "monitor.md"


def page_block(marker: str) -> str:
    """The first fenced block after ``marker`` in docs/monitor.md."""
    import re

    text = PAGE.read_text()
    m = re.compile(r"```\w*\n(.*?)```", re.S).search(text, text.index(marker))
    assert m is not None, marker
    return m.group(1)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def shell_env(where: Path) -> dict[str, str]:
    """The environment a page's shell block runs in: ``agenteval`` and ``python`` are this
    interpreter (shims in ``where/bin``)."""
    import os
    import stat
    import sys

    bin_dir = where / "bin"
    bin_dir.mkdir()
    shims = (("agenteval", f"{sys.executable} -m agenteval"), ("python", sys.executable))
    for name, target in shims:
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONUNBUFFERED": "1"}
