"""Overhead of the recording proxy per model call: direct vs through the proxy, side by side.

    python bench/proxy.py [--calls 300] [--rounds 5] [--concurrency 1]

The upstream is the fake OpenAI server in its own process (no added latency). The client
is an aiohttp session on the same event loop as the proxy (as for an ``async`` agent in
``agenteval run --capture-proxy``). Each call is a two-tool chat completion request whose
history carries one tool result (so the proxy reads a request, a response with a tool
call, and pairs an output), once as JSON and once streamed. Rows:

- ``direct json`` / ``proxy json``: ``POST /chat/completions``, JSON response;
- ``direct stream`` / ``proxy stream``: the same with ``"stream": true`` and
  ``stream_options.include_usage``.

Rounds alternate direct and proxy so drift hits both; the median round counts. The last
line is JSON: microseconds per call for each row and the proxy's overhead per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import aiohttp

from agenteval.traces.proxy import RecordingProxy

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("find_customer", "count_orders")
]
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "find_customer", "arguments": "{}"},
}


def body(stream: bool) -> dict[str, Any]:
    messages = [
        {"role": "user", "content": "Orders? [[call:find_customer {}]] [[call:count_orders {}]]"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"id": 3}'},
    ]
    out: dict[str, Any] = {"model": "gpt-fake", "messages": messages, "tools": TOOLS}
    if stream:
        out |= {"stream": True, "stream_options": {"include_usage": True}}
    return out


async def calls(http: aiohttp.ClientSession, base: str, n: int, stream: bool, conc: int) -> float:
    """Seconds per call for ``n`` calls, ``conc`` at a time."""
    payload = json.dumps(body(stream)).encode()
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}

    async def one() -> None:
        async with http.post(f"{base}/chat/completions", data=payload, headers=headers) as r:
            await r.read()
            assert r.status == 200

    async def worker(k: int) -> None:
        for _ in range(k):
            await one()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(n // conc) for _ in range(conc)))
    return (time.perf_counter() - t0) / (n // conc * conc)


async def bench(upstream: str, n: int, rounds: int, conc: int) -> dict[str, float]:
    proxy = await RecordingProxy(upstream).start()
    rows: dict[str, list[float]] = {}
    try:
        async with aiohttp.ClientSession() as http:
            with proxy.trial() as t:
                await calls(http, upstream, 20, False, 1)  # warm both paths up
                await calls(http, t.base_url, 20, False, 1)
                for r in range(rounds):
                    for stream in (False, True):
                        kind = "stream" if stream else "json"
                        order = [("direct", upstream), ("proxy", t.base_url)]
                        for name, base in order if r % 2 == 0 else order[::-1]:
                            s = await calls(http, base, n, stream, conc)
                            rows.setdefault(f"{name} {kind}", []).append(s)
                    t.calls.clear()  # keep the trial's record from growing across rounds
    finally:
        await proxy.close()
    return {k: statistics.median(v) * 1e6 for k, v in rows.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--concurrency", type=int, default=1)
    args = p.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "agenteval.testing.fake_openai", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().split()[1]
        us = asyncio.run(
            bench(f"http://127.0.0.1:{port}/v1", args.calls, args.rounds, args.concurrency)
        )
    finally:
        server.terminate()
        server.wait(10)
    print(f"{'row':<16}{'us/call':>10}")
    for k, v in us.items():
        print(f"{k:<16}{v:>10.0f}")
    overhead = {kind: us[f"proxy {kind}"] - us[f"direct {kind}"] for kind in ("json", "stream")}
    for kind, v in overhead.items():
        print(f"proxy overhead ({kind}): {v:.0f} us per model call")
    print(json.dumps({"us_per_call": us, "overhead_us": overhead, "concurrency": args.concurrency}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
