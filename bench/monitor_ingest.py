"""``agenteval monitor`` under load from the real OpenTelemetry SDK exporter.

    python bench/monitor_ingest.py [--procs 2] [--traces 3000] [--rate 0] [--window 10s]
        [--idle 0.5s] [--cpu 0]

Starts the real command (pinned to one CPU with ``--cpu``), then ``--procs`` senders
(bench/monitor_traffic.py: OTLPSpanExporter, protobuf, BatchSpanProcessor; 3 spans an
invocation), each sending ``--traces`` invocations (``--rate`` per second each, 0: flat
out). It polls the windows' trials.jsonl every 20 ms and samples the monitor's RSS every
0.5 s. Printed:

- **ingest**: spans acknowledged per second (the senders' wall time; a sender is the
  bottleneck when its CPU is the one saturated, so the monitor's own CPU share is shown);
- **scored**: spans per second from the first request to the last trial written;
- **delay**: from a trace's root span end to its trial appearing in trials.jsonl (p50,
  p95, max), which includes ``--idle`` by design (the wait for late spans);
- **memory**: the monitor's RSS at start, its peak, and at the end; with a short
  ``--window`` the windows open and close during the run, so a flat RSS means nothing
  accumulates per window (done ids are kept for two windows).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def _spans_total(endpoint: str) -> float:
    import urllib.request

    try:
        with urllib.request.urlopen(endpoint + "/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("agenteval_monitor_spans_total "):
                    return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--traces", type=int, default=3000)
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--window", default="10s")
    ap.add_argument("--idle", default="0.5s")
    ap.add_argument("--cpu", type=int, default=None, help="pin the monitor to this CPU")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument(
        "--blast",
        type=int,
        default=0,
        metavar="W",
        help="pre-encoded requests posted by W threads per sender (monitor_traffic.py --blast)",
    )
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="monitor-bench-"))
    out = work / "mon"

    def pin() -> None:
        if a.cpu is not None:
            os.sched_setaffinity(0, {a.cpu})

    mon = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "monitor", "--listen", "127.0.0.1:0", "--out",
         str(out), "--window", a.window, "--idle", a.idle, "--max-wait", "5s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=pin,
    )  # fmt: skip
    assert mon.stdout is not None
    endpoint = mon.stdout.readline().split()[-1]
    rss0 = _rss_mb(mon.pid)
    cpu0 = _cpu_s(mon.pid)
    t0 = time.time()
    traffic = [sys.executable, str(HERE / "monitor_traffic.py"), endpoint, str(a.traces)]
    senders = [
        subprocess.Popen(
            [*traffic, "--rate", str(a.rate), "--service", f"s{i}", "--blast", str(a.blast)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(a.procs)
    ]
    want = a.procs * a.traces
    seen: dict[tuple[str, str], float] = {}
    ends: dict[tuple[str, str], float] = {}
    offsets: dict[Path, int] = {}
    rss: list[float] = []
    t_sent = None
    last_sample = 0.0
    deadline = time.time() + a.timeout
    acked: list[tuple[float, float]] = []  # (time, spans_total) from /metrics
    while time.time() < deadline:
        now = time.time()
        if t_sent is not None and len(seen) >= want:
            break
        if t_sent is not None and now - max(seen.values(), default=t_sent) > 5:
            break  # nothing new for 5 s after the senders ended
        for f in out.glob("2*/trials.jsonl"):
            at = offsets.get(f, 0)
            with open(f, "rb") as fh:
                fh.seek(at)
                data = fh.read()
            cut = data.rfind(b"\n") + 1
            offsets[f] = at + cut
            for line in data[:cut].splitlines():
                t = json.loads(line)
                key = (t["metadata"]["trace_id"], t["metadata"]["span_id"])
                seen[key] = now
                start = datetime.fromisoformat(t["started_at"]).timestamp()
                ends[key] = start + (t["latency"]["total_s"] or 0.0)
        if t_sent is None and all(s.poll() is not None for s in senders):
            t_sent = time.time()
        if now - last_sample >= 0.5:
            rss.append(_rss_mb(mon.pid))
            acked.append((now, _spans_total(endpoint)))
            last_sample = now
        time.sleep(0.02)
    t_end = max(seen.values()) if seen else time.time()
    cpu = _cpu_s(mon.pid) - cpu0
    mon.terminate()
    mon.communicate(timeout=30)
    for s in senders:
        s.wait(30)
    t_sent = t_sent or time.time()
    delays = sorted(seen[k] - ends[k] for k in seen)
    print(f"{a.procs} senders x {a.traces} invocations (3 spans each), window {a.window},"
          f" idle {a.idle}, monitor on CPU {a.cpu if a.cpu is not None else 'any'}")  # fmt: skip
    print(f"scored {len(seen)} of {want} trials")
    busy = [(t, n) for t, n in acked if n > 0]
    if len(busy) >= 2:
        (ta, na), (tb, nb) = busy[0], max(busy, key=lambda x: x[1])
        tb = next(t for t, n in busy if n == nb)
        rate = (nb - na) / (tb - ta) if tb > ta else float("nan")
        print(f"ingest: {rate:,.0f} spans/s acknowledged (from /metrics, {tb - ta:.1f} s)")
    else:
        print("ingest: too short to measure (fewer than two samples of /metrics under load)")
    print(
        f"monitor CPU {cpu:.1f} s over {t_end - t0:.1f} s = {cpu / (t_end - t0):.0%} of one"
        f" core; {1000 * cpu / max(3 * len(seen), 1):.2f} ms CPU per span"
        f" (~{3 * len(seen) / max(cpu, 1e-9):,.0f} spans/s per busy core)"
    )
    first = min(seen.values(), default=t_end)
    print(
        f"scored: {3 * len(seen) / max(t_end - first, 1e-9):,.0f} spans/s from the first trial"
        f" written to the last ({t_end - first:.1f} s)"
    )
    if delays:
        print(
            f"delay root end -> trial written: p50 {statistics.median(delays):.2f} s,"
            f" p95 {delays[int(0.95 * (len(delays) - 1))]:.2f} s, max {delays[-1]:.2f} s"
            f" (includes --idle {a.idle})"
        )
    if rss:
        print(f"monitor RSS: start {rss0:.0f} MB, peak {max(rss):.0f} MB, end {rss[-1]:.0f} MB")


if __name__ == "__main__":
    main()
