"""Scale-out benchmark: worker processes and Ray against one process, side by side.

    python bench/scale.py                 # N = 1,000 cases of 5 ms CPU; rescore 100,000 trials
    python bench/scale.py --smoke         # tiny sizes, no Ray: proves the script works
    python bench/scale.py --no-ray        # only local worker processes

Every row is the real ``agenteval run`` / ``agenteval rescore`` in a child process, wall
time from spawn to exit. The rows of one table are measured alternately, round after round
(the order rotates), and the median of the rounds is shown, so that the ratios compare
runs made under the same load.

- **CPU-bound agent** (``bench/scale_agent.py``: 5 ms of pure-Python work per case, holding
  the GIL), ``--concurrency 1`` for every row (in one process more threads only add GIL
  contention). The time per trial is the span from the first trial's start to the last
  trial's end (``started_at`` and latency in ``trials.jsonl``) divided by N, so start-up
  and shutdown (interpreter, worker processes, ``ray.init``) are left out; they are shown
  on their own ("start+end s" = wall - span). Speed-up = per-trial time of one process /
  per-trial time of the row.
- **Per-trial overhead**: the same with a 0 ms agent: what an executor costs per trial
  when the agent costs nothing (hand-out, pickling, the result line, the writer).
- **Rescore**: ``bench/gen.py``'s 100,000 realistic trials, ``rescore`` in one process vs
  ``--processes 2``.
- **Judge**: ``agenteval judge`` of 2,000 of those trials (rubric ``answer_relevance``, no
  cache) against the fake OpenAI server with 50 ms latency per reply, in its own process:
  one process at several ``--judge-concurrency`` vs ``--processes 2`` (requests in flight =
  workers x concurrency). The fake's replies carry no verdict, so every score is
  inconclusive: the table times the judge's calls, not its verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen import write_rescore_run  # noqa: E402
from procs import FakeServer, agenteval_cmd, measure  # noqa: E402


def _dataset(path: Path, n: int) -> Path:
    path.write_text(
        "".join(f'{{"id": "s{i}", "input": "question {i}"}}\n' for i in range(n)),
        encoding="utf-8",
    )
    return path


def _env(agent_ms: float) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update({"SCALE_AGENT_MS": str(agent_ms), "RAY_USAGE_STATS_ENABLED": "0"})
    return env


Row = tuple[str, list[str]]


def _rows(ray: bool, smoke: bool) -> list[Row]:
    rows: list[Row] = [("one process", []), ("--processes 2", ["--processes", "2"])]
    if not smoke:
        rows.append(("--processes 4", ["--processes", "4"]))
    if ray:
        rows += [
            ("Ray local, 1 actor", ["--executor", "ray", "--processes", "1"]),
            ("Ray local, 2 actors", ["--executor", "ray", "--processes", "2"]),
        ]
        if not smoke:
            rows.append(("Ray local, 4 actors", ["--executor", "ray", "--processes", "4"]))
    return rows


def _time_run(
    work: Path, dataset: Path, n: int, extra: list[str], agent_ms: float
) -> tuple[float, float]:
    """(wall s from spawn to exit, s from the first trial's start to the last one's end)."""
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*agenteval_cmd(), "run", str(dataset), "--agent", "scale_agent:busy", "--out", str(out)]
    m = measure([*cmd, "--quiet", "--concurrency", "1", *extra], env=_env(agent_ms))
    if m.rc != 0:
        sys.exit(f"{' '.join(cmd + extra)} failed ({m.rc}): {m.stderr[-2000:]}")
    starts, ends = [], []
    with open(out / "trials.jsonl", "rb") as f:
        for line in f:
            t = json.loads(line)
            start = datetime.fromisoformat(t["started_at"]).timestamp()
            starts.append(start)
            ends.append(start + t["latency"]["total_s"])
    if len(starts) != n:
        sys.exit(f"{' '.join(extra)}: {len(starts)} trials written, expected {n}")
    shutil.rmtree(out, ignore_errors=True)
    return m.wall_s, max(ends) - min(starts)


def _rounds(
    rows: list[Row], rounds: int, once: Callable[[Row], tuple[float, ...]]
) -> dict[str, list[tuple[float, ...]]]:
    got: dict[str, list[tuple[float, ...]]] = {name: [] for name, _ in rows}
    for r in range(rounds):
        order = rows[r % len(rows) :] + rows[: r % len(rows)]
        for row in order:
            got[row[0]].append(once(row))
            print(
                f"  round {r + 1}: {row[0]}: {', '.join(f'{x:.2f}' for x in got[row[0]][-1])}",
                file=sys.stderr,
                flush=True,
            )
    return got


def agent_table(work: Path, n: int, agent_ms: float, rows: list[Row], rounds: int) -> str:
    dataset = _dataset(work / f"cases-{n}.jsonl", n)

    def once(row: Row) -> tuple[float, ...]:
        wall, span = _time_run(work, dataset, n, row[1], agent_ms)
        return wall, span, span / n * 1e3

    got = _rounds(rows, rounds, once)
    base = statistics.median(x[2] for x in got["one process"])
    lines = [
        f"agent {agent_ms:g} ms CPU per case, N = {n:,}, --concurrency 1, median of {rounds}"
        " (ms/trial of each round in brackets)",
        f"{'executor':<22} {'wall s':>7} {'start+end s':>11} {'ms/trial':>9}"
        f" {'trials/s':>9} {'speed-up':>9}  rounds",
    ]
    for name, _ in rows:
        xs = got[name]
        per = statistics.median(x[2] for x in xs)
        wall = statistics.median(x[0] for x in xs)
        fixed = statistics.median(x[0] - x[1] for x in xs)
        spread = ", ".join(f"{x[2]:.3f}" for x in xs)
        lines.append(
            f"{name:<22} {wall:>7.2f} {fixed:>11.2f} {per:>9.3f} {1e3 / per:>9,.0f}"
            f" {base / per:>8.2f}x  [{spread}]"
        )
    return "\n".join(lines)


def rescore_table(work: Path, n: int, rounds: int) -> str:
    src = work / "rescore-src"
    if not src.exists():
        write_rescore_run(src, n)
    rows: list[Row] = [
        ("rescore, one process", []),
        ("rescore --processes 2", ["--processes", "2"]),
    ]

    def once(row: Row) -> tuple[float, ...]:
        out = work / "rescore-out"
        shutil.rmtree(out, ignore_errors=True)
        m = measure([*agenteval_cmd(), "rescore", str(src), "--out", str(out), "--quiet", *row[1]])
        if m.rc != 0 or (out / "trials.jsonl").read_bytes().count(b"\n") != n:
            sys.exit(f"{row[0]} failed ({m.rc}): {m.stderr[-2000:]}")
        shutil.rmtree(out, ignore_errors=True)
        return (m.wall_s,)

    got = _rounds(rows, rounds, once)
    base = statistics.median(x[0] for x in got[rows[0][0]])
    lines = [
        f"rescore of {n:,} trials (every built-in scorer), median of {rounds}",
        f"{'what':<24} {'wall s':>8} {'trials/s':>9} {'speed-up':>9}  rounds",
    ]
    for name, _ in rows:
        wall = statistics.median(x[0] for x in got[name])
        spread = ", ".join(f"{x[0]:.1f}" for x in got[name])
        lines.append(f"{name:<24} {wall:>8.1f} {n / wall:>9,.0f} {base / wall:>8.2f}x  [{spread}]")
    return "\n".join(lines)


def judge_table(work: Path, n: int, rounds: int, latency_ms: float, smoke: bool) -> str:
    src = work / f"judge-src-{n}"
    if not src.exists():
        write_rescore_run(src, n)
    rows: list[Row] = [
        ("one process, conc. 8", ["--judge-concurrency", "8"]),
        ("one process, conc. 16", ["--judge-concurrency", "16"]),
        ("--processes 2, conc. 8", ["--processes", "2", "--judge-concurrency", "8"]),
    ]
    if not smoke:
        rows += [
            ("one process, conc. 64", ["--judge-concurrency", "64"]),
            ("--processes 2, conc. 32", ["--processes", "2", "--judge-concurrency", "32"]),
        ]

    with FakeServer(latency_ms) as server:
        judge = ["--rubric", "answer_relevance", "--judge-endpoint", server.base_url]
        judge += ["--judge-model", "m", "--no-judge-cache", "--quiet"]

        def once(row: Row) -> tuple[float, ...]:
            out = work / "judge-out"
            shutil.rmtree(out, ignore_errors=True)
            cmd = [*agenteval_cmd(), "judge", str(src), "--out", str(out), *judge, *row[1]]
            m = measure(cmd, server=server)
            # exit 4: no verdict reached, as expected: the fake judge's replies are no verdicts
            if m.rc not in (0, 4) or (out / "trials.jsonl").read_bytes().count(b"\n") != n:
                sys.exit(f"{row[0]} failed ({m.rc}): {m.stderr[-2000:]}")
            shutil.rmtree(out, ignore_errors=True)
            return (m.wall_s,)

        got = _rounds(rows, rounds, once)
    base = statistics.median(x[0] for x in got[rows[0][0]])
    lines = [
        f"judge of {n:,} trials, one rubric, fake judge {latency_ms:g} ms per reply, no cache,"
        f" median of {rounds}",
        f"{'what':<24} {'wall s':>8} {'calls/s':>9} {'speed-up':>9}  rounds",
    ]
    for name, _ in rows:
        wall = statistics.median(x[0] for x in got[name])
        spread = ", ".join(f"{x[0]:.1f}" for x in got[name])
        lines.append(f"{name:<24} {wall:>8.1f} {n / wall:>9,.0f} {base / wall:>8.2f}x  [{spread}]")
    return "\n".join(lines)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=1000, help="cases for the agent tables (1,000)")
    p.add_argument("--rescore-n", type=int, default=100_000, help="trials to rescore (100,000)")
    p.add_argument("--rounds", type=int, default=3, help="rounds; the median is shown (3)")
    p.add_argument("--no-ray", action="store_true", help="leave out the Ray rows")
    p.add_argument("--no-rescore", action="store_true", help="leave out the rescore table")
    p.add_argument("--no-agent", action="store_true", help="leave out the agent tables")
    p.add_argument("--no-judge", action="store_true", help="leave out the judge table")
    p.add_argument("--judge-n", type=int, default=2000, help="trials to judge (2,000)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, no Ray (proves it runs)")
    p.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = p.parse_args()
    if args.smoke:
        args.n, args.rescore_n, args.rounds, args.no_ray = 40, 2000, 1, True
        args.judge_n = 40
    ray = not args.no_ray
    if ray:
        try:
            import ray as _ray  # noqa: F401
        except ImportError:
            print("Ray is not installed (pip install 'agenteval[ray]'): Ray rows left out")
            ray = False
    work = args.work or Path(tempfile.mkdtemp(prefix="agenteval-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"agenteval scale-out benchmark\ncommand: python bench/scale.py {' '.join(sys.argv[1:])}")
    print(f"cores: {os.cpu_count()}; load average at start: {_load()}")
    rows = _rows(ray, args.smoke)
    if not args.no_agent:
        print("\n== CPU-bound agent ==")
        print(agent_table(work, args.n, 0 if args.smoke else 5, rows, args.rounds))
        print("\n== per-trial overhead (0 ms agent) ==")
        print(agent_table(work, args.n * (1 if args.smoke else 5), 0, rows, args.rounds))
    if not args.no_rescore:
        print("\n== rescore ==")
        print(rescore_table(work, args.rescore_n, args.rounds))
    if not args.no_judge:
        print("\n== judge ==")
        print(judge_table(work, args.judge_n, args.rounds, 50, args.smoke))
    print(f"\nload average at end: {_load()}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
