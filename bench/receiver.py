"""Overhead of ``--otlp-receiver`` per trial, side by side on the same HTTP agent.

    python bench/receiver.py [--trials 200] [--concurrency 8] [--rounds 3]

The agent is the test suite's agent service (``tests/traces/otlp_service.py``): a real
aiohttp process that extracts the ``traceparent``, runs a scripted two-tool trajectory
and exports 6 GenAI spans per trial with the official OTLP/HTTP exporter
(``BatchSpanProcessor``, 100 ms delay). Two copies run, identical but for where they
export: one to a sink in this process (answers 200 to everything, so the agent does the
same work), one to agenteval's receiver. Each row is a real ``agenteval run`` of
``--trials`` cases through ``--http-config``:

- ``receiver off``: the spans go to the sink; the trials have no calls;
- ``receiver on``: ``--otlp-receiver``; every trial must get its 2 calls (checked).

Per trial: wall time of the run and CPU time of the agenteval process (user + sys),
divided by the trials. ``on - off`` is what the receiver adds: decoding, routing and
mapping spans (CPU) and the wait for late spans (wall; bounded by the quiet period once
the root span is in). Rounds alternate the rows so drift hits both; the median counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
SERVICE = ROOT / "tests" / "traces" / "otlp_service.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sink() -> int:
    """An OTLP endpoint that accepts everything and keeps nothing, on its own thread."""
    port = free_port()
    ready = threading.Event()

    async def ok(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=b"", content_type="application/x-protobuf")

    async def main() -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/traces", ok)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        ready.set()
        await asyncio.Event().wait()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()
    ready.wait(10)
    return port


def start_service(otlp_port: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVICE)],
        env={**os.environ, "AGENT_OTLP": f"http://127.0.0.1:{otlp_port}"},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("port "):
        raise SystemExit(f"the agent service did not start: {line!r}")
    return proc, int(line.split()[1])


def run(work: Path, port: int, trials: int, concurrency: int, receiver: int | None) -> Any:
    names = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald"]
    cases = work / "cases.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": f"How many orders has {names[i % 6]}?"}) + "\n"
            for i in range(trials)
        )
    )
    cfg = work / f"agent-{port}.yaml"
    cfg.write_text(
        f"url: http://127.0.0.1:{port}/ask\n"
        'body: {question: "{input}", id: "{id}"}\nresponse: {output: answer}\n'
    )
    out = work / f"run-{time.monotonic_ns()}"
    argv = [sys.executable, "-m", "agenteval", "run", str(cases), "--http-config", str(cfg)]
    argv += ["--out", str(out), "--quiet", "--concurrency", str(concurrency)]
    if receiver is not None:
        argv += ["--otlp-receiver", f"127.0.0.1:{receiver}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    calls = sum(len(t["tool_calls"]) for t in rows)
    expected = 2 * trials if receiver is not None else 0
    if calls != expected:
        raise SystemExit(f"expected {expected} calls, got {calls}: {proc.stderr}")
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-warmup", action="store_true", help="skip the warm-up runs")
    args = ap.parse_args()
    sink = start_sink()
    receiver = free_port()
    off_svc, off_port = start_service(sink)
    on_svc, on_port = start_service(receiver)
    results: dict[str, list[tuple[float, float]]] = {"receiver off": [], "receiver on": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            if not args.no_warmup:  # warm both services up
                run(work, off_port, 6, 2, None)
                run(work, on_port, 6, 2, receiver)
            for r in range(args.rounds):
                order = [("receiver off", off_port, None), ("receiver on", on_port, receiver)]
                for name, port, rec in order if r % 2 == 0 else order[::-1]:
                    results[name].append(run(work, port, args.trials, args.concurrency, rec))
    finally:
        for p in (off_svc, on_svc):
            p.terminate()
            p.wait(10)
    n = args.trials
    wall = {k: statistics.median(w for w, _ in v) / n * 1000 for k, v in results.items()}
    cpu = {k: statistics.median(c for _, c in v) / n * 1000 for k, v in results.items()}
    print(f"{args.trials} trials, --concurrency {args.concurrency}, median of {args.rounds}")
    print(f"{'':14} {'wall ms/trial':>14} {'agenteval CPU ms/trial':>23}")
    for k in results:
        print(f"{k:14} {wall[k]:14.2f} {cpu[k]:23.2f}")
    d_wall = wall["receiver on"] - wall["receiver off"]
    d_cpu = cpu["receiver on"] - cpu["receiver off"]
    print(f"{'on - off':14} {d_wall:14.2f} {d_cpu:23.2f}")
    print(json.dumps({"ms_per_trial": wall, "cpu_ms_per_trial": cpu, "trials": n}))


if __name__ == "__main__":
    main()
