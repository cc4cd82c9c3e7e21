"""Replay benchmark: a fully cached ``agenteval run`` against the bare loop on a 0 ms endpoint.

    python bench/replay.py             # N = 10,000 cases, 3 rounds
    python bench/replay.py --smoke     # N = 200, 1 round: proves the script works (a test runs it)

The fake OpenAI-compatible endpoint (``python -m agenteval.testing.fake_openai``, 0 ms)
runs in its own process. The cache is filled once (``agenteval run ... --cache DIR``, not
measured); then, in the same run and alternating (the order rotates every round; median of
``--rounds``), we measure whole processes, spawn to exit:

- the bare loop (``bench/bare_loop.py``: asyncio + aiohttp on uvloop, the same requests,
  nothing scored or written);
- ``agenteval run DATASET --endpoint URL --model m --concurrency 100`` (live: every call
  made);
- the same with ``--cache DIR`` (replayed: every call served from the cache).

Each agenteval run must hold every trial answered and scored by every built-in scorer; the
replayed one must have every trial's model call in its ``cached`` list (a call served from
the cache sends nothing). Ratios are throughputs over the bare loop's (higher is faster).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gen import write_run_dataset
from procs import PY, FakeServer, Measured, agenteval_cmd, check_run, measure

BENCH = Path(__file__).resolve().parent
SCORERS = 16


def _fail(what: str, m: Measured) -> None:
    sys.stderr.write(f"{what} failed (exit {m.rc}):\n{m.stdout[-2000:]}\n{m.stderr[-2000:]}\n")
    raise SystemExit(1)


def _replayed(run_dir: Path, n: int) -> str | None:
    """None when every one of the ``n`` trials was served from the cache."""
    with open(run_dir / "trials.jsonl", encoding="utf-8") as f:
        cached = sum(1 for line in f if len(json.loads(line).get("cached") or []) == 1)
    return None if cached == n else f"{cached} of {n} trials replayed"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--smoke", action="store_true", help="N = 200, 1 round")
    p.add_argument("--work", type=Path, help="scratch directory (default: a temporary one)")
    args = p.parse_args(argv)
    n, rounds = (200, 1) if args.smoke else (args.n, args.rounds)
    work = args.work or Path(tempfile.mkdtemp(prefix="agenteval-replay-"))
    work.mkdir(parents=True, exist_ok=True)
    dataset = write_run_dataset(work / "cases.jsonl", n)
    cache = work / "cache"
    with FakeServer(0.0) as srv:
        base = [*agenteval_cmd(), "run", str(dataset), "--endpoint", srv.base_url, "--model"]
        base += ["m", "--concurrency", "100", "--quiet"]

        def agenteval(name: str, *extra: str, replayed: bool = False) -> Measured:
            out = work / f"{name}-{time.monotonic_ns()}"
            m = measure([*base, "--out", str(out), *extra], server=srv)
            if m.rc != 0:
                _fail(f"agenteval run ({name})", m)
            problem = check_run(out, n, SCORERS)
            if problem is None and replayed:
                problem = _replayed(out, n)
            if problem:
                sys.exit(f"agenteval run ({name}): {problem}")
            shutil.rmtree(out)
            return m

        def bare() -> Measured:
            m = measure([PY, str(BENCH / "bare_loop.py"), str(dataset), srv.base_url], server=srv)
            if m.rc != 0:
                _fail("bare loop", m)
            return m

        fill = agenteval("fill", "--cache", str(cache), "--cache-mode", "refresh")
        jobs = {
            "bare": bare,
            "live": lambda: agenteval("live"),
            "replayed": lambda: agenteval("replayed", "--cache", str(cache), replayed=True),
        }
        walls: dict[str, list[float]] = {k: [] for k in jobs}
        names = list(jobs)
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                walls[name].append(jobs[name]().wall_s)
    entries = sum(1 for _ in cache.rglob("*.json"))
    med = {k: statistics.median(v) for k, v in walls.items()}
    print(f"== replay: {n:,} cases, 0 ms endpoint, median of {rounds} round(s) ==")
    print(f"cache filled once in {fill.wall_s:.2f} s: {entries:,} entries")
    print(f"{'':32} {'wall s':>8} {'cases/s':>9} {'vs bare':>8}")
    rows = {
        "bare loop (process)": "bare",
        "agenteval run, live": "live",
        "agenteval run, replayed (cache)": "replayed",
    }
    for label, key in rows.items():
        ratio = med["bare"] / med[key]
        print(f"{label:32} {med[key]:8.2f} {n / med[key]:9.0f} {ratio:8.2f}")
    print(
        json.dumps(
            {
                "n": n,
                "rounds": rounds,
                "bare_s": med["bare"],
                "live_s": med["live"],
                "replayed_s": med["replayed"],
                "replayed_vs_bare": med["bare"] / med["replayed"],
                "replayed_vs_live": med["live"] / med["replayed"],
            }
        )
    )
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
