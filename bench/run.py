"""agenteval performance benchmark: harness overhead, scorer throughput, memory.

    python bench/run.py            # full: N = 2,000 and 20,000; memory at 200,000 (~10 min)
    python bench/run.py --quick    # N = 2,000 only; memory at 2,000 vs 20,000
    python bench/run.py --smoke    # tiny sizes, proves the script works (used by a test)
    python bench/run.py --peers inspect_ai,deepeval,promptfoo   # add peers when installed

Throughput: a fake OpenAI-compatible endpoint (``python -m agenteval.testing.fake_openai``)
runs in its own process; against it, in the same run and alternating (the order rotates
every round; median of ``--rounds``), we measure

- the bare loop (``bench/bare_loop.py``: asyncio + aiohttp on uvloop, same requests);
- ``agenteval run DATASET --endpoint URL --model m --concurrency 100 --quiet --out DIR``;
- ``evaluate()`` with ``OpenAIChatAgent(URL, "m", limit=100)``, concurrency 100.

``agenteval run`` is compared with the bare loop's whole process (spawn to exit: both pay
interpreter start-up); ``evaluate()`` with the bare loop's in-process loop time (neither
counts imports). Every agenteval trial must be answered, scored by every built-in scorer
and written, and the run summarised; the script checks that after each measurement.

Scorers: ``agenteval rescore`` on a generated run of realistic trials, and the time of
``Scorers.apply`` alone. Memory: peak RSS of ``agenteval run`` at a small and a large N.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gen import write_rescore_run, write_run_dataset
from peers import PEERS, peer_command
from procs import (
    PY,
    FakeServer,
    Measured,
    agenteval_cmd,
    check_run,
    check_scored,
    code_src,
    env_for,
    measure,
)

BENCH = Path(__file__).resolve().parent
SCORERS = 16  # built-in deterministic scorers every trial must carry
TARGET_RATIO = 0.9
TARGET_RESCORE = 20_000.0
TARGET_RSS = 1.5
TARGET_PROCS = 1.8
TARGET_START = 0.5


class Table:
    """Rows printed as an aligned plain-text table."""

    def __init__(self, *headers: str) -> None:
        self.headers = headers
        self.rows: list[tuple[str, ...]] = []

    def add(self, *cells: object) -> None:
        self.rows.append(tuple(str(c) for c in cells))

    def render(self) -> str:
        widths = [
            max(len(r[i]) for r in [self.headers, *self.rows]) for i in range(len(self.headers))
        ]
        line = "  ".join("-" * w for w in widths)
        fmt = [
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=False))
            )
            for r in [self.headers, *self.rows]
        ]
        return "\n".join([fmt[0], line, *fmt[1:]])


def _machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.1f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores{mem};"
        f" Python {platform.python_version()}"
    )


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def _fail(what: str, m: Measured) -> None:
    sys.stderr.write(f"{what} failed (exit {m.rc}):\n{m.stdout[-2000:]}\n{m.stderr[-2000:]}\n")
    raise SystemExit(1)


def _replayed(run_dir: Path, n: int) -> str | None:
    """None when every one of the ``n`` trials was served from the replay cache."""
    with open(run_dir / "trials.jsonl", encoding="utf-8") as f:
        cached = sum(1 for line in f if json.loads(line).get("cached"))
    return None if cached == n else f"{cached} of {n} trials replayed"


def _harnesses(
    dataset: Path,
    n: int,
    srv: FakeServer,
    work: Path,
    peers: list[str],
    baseline: Path | None = None,
) -> dict[str, Callable[[], Measured]]:
    """name -> a function measuring one execution (checked for completeness). With
    ``baseline``, also ``agenteval run`` of today's code (``cli-today``); at 0 ms, also a
    fully cached re-run (``cached``, and ``cached-today``), the cache filled once first."""
    url = srv.base_url
    cache = work / f"cache-{n}"

    def agenteval_run(src: Path | None, *extra: str, replayed: bool = False) -> Measured:
        out = work / f"cli-{time.monotonic_ns()}"
        cmd = [PY, "-m", "agenteval"] if src else agenteval_cmd()
        cmd += ["run", str(dataset), "--endpoint", url, "--model", "m", *extra]
        m = measure(
            [*cmd, "--concurrency", "100", "--quiet", "--out", str(out)],
            server=srv,
            env=env_for(src),
        )
        if m.rc != 0:
            _fail("agenteval run", m)
        problem = check_run(out, n, SCORERS) or (_replayed(out, n) if replayed else None)
        if problem:
            sys.exit(f"agenteval run: incomplete run: {problem}")
        shutil.rmtree(out)
        return m

    def bare() -> Measured:
        m = measure([PY, str(BENCH / "bare_loop.py"), str(dataset), url], server=srv)
        if m.rc != 0:
            _fail("bare loop", m)
        info = m.json_line()
        m.extra.update(loop_s=info["loop_s"], cpu_s=info["cpu_s"])
        return m

    def cli() -> Measured:
        return agenteval_run(None)

    def api() -> Measured:
        out = work / f"eval-{time.monotonic_ns()}"
        m = measure([PY, str(BENCH / "evaluate_child.py"), str(dataset), url, str(out)], server=srv)
        if m.rc != 0:
            _fail("evaluate()", m)
        problem = check_run(out, n, SCORERS)
        if problem:
            sys.exit(f"evaluate(): incomplete run: {problem}")
        info = m.json_line()
        m.extra.update(loop_s=info["loop_s"], cpu_s=info["cpu_s"])
        shutil.rmtree(out)
        return m

    found: dict[str, Callable[[], Measured]] = {"bare": bare, "cli": cli, "evaluate": api}
    if baseline is not None:
        found["cli-today"] = lambda: agenteval_run(baseline)
    if srv.latency_ms == 0:
        agenteval_run(None, "--cache", str(cache), "--cache-mode", "refresh")  # filled once
        found["cached"] = lambda: agenteval_run(None, "--cache", str(cache), replayed=True)
        if baseline is not None:
            found["cached-today"] = lambda: agenteval_run(
                baseline, "--cache", str(cache), replayed=True
            )
    for name in peers:
        cmd, env, note = peer_command(name, dataset, url, work / f"peer-{name}")
        if cmd is None:
            print(f"  skipping peer {name}: {note}")
            continue

        def peer(
            cmd: list[str] = cmd,
            env: dict[str, str] = env,
            name: str = name,
            cwd: Path = work / f"peer-{name}",
        ) -> Measured:
            m = measure(cmd, server=srv, env=env, cwd=cwd)
            if m.rc != 0:
                sys.stderr.write(f"peer {name} exited {m.rc}: {m.stderr[-500:]}\n")
            return m

        found[f"peer:{name}"] = peer
    return found


def throughput(
    latencies: list[float],
    ns: list[int],
    rounds: int,
    work: Path,
    peers: list[str],
    baseline: Path | None = None,
) -> tuple[Table, dict[tuple[float, int, str], float]]:
    table = Table(
        "latency",
        "N",
        "harness",
        "samples/s",
        "wall s",
        "CPU s",
        "CPU µs/trial",
        "peak RSS MB",
        "vs bare",
        "server CPU",
    )
    ratios: dict[tuple[float, int, str], float] = {}
    for lat in latencies:
        with FakeServer(lat) as srv:
            for n in ns:
                dataset = write_run_dataset(work / f"cases-{n}.jsonl", n)
                runs = _harnesses(
                    dataset, n, srv, work, peers if lat == latencies[0] else [], baseline
                )
                names = list(runs)
                got: dict[str, list[Measured]] = {k: [] for k in names}
                for r in range(rounds):
                    order = names[r % len(names) :] + names[: r % len(names)]
                    for name in order:
                        got[name].append(runs[name]())
                        print(
                            f"  {lat:g} ms N={n} round {r + 1}: {name} {got[name][-1].wall_s:.2f}s",
                            flush=True,
                        )
                _rows(table, ratios, lat, n, got)
    return table, ratios


def _rows(
    table: Table,
    ratios: dict[tuple[float, int, str], float],
    lat: float,
    n: int,
    got: dict[str, list[Measured]],
) -> None:
    def row(
        label: str, ms: list[Measured], secs: list[float], ref: float | None, inproc: bool = False
    ) -> float:
        rate = n / _med(secs)
        cpu = _med([m.extra["cpu_s"] if inproc else m.cpu_s for m in ms])
        srv = [m.server_cpu_s / m.wall_s for m in ms if m.server_cpu_s is not None]
        table.add(
            f"{lat:g} ms",
            f"{n:,}",
            label,
            f"{rate:,.0f}",
            f"{_med(secs):.2f}",
            f"{cpu:.2f}",
            f"{cpu / n * 1e6:,.0f}",
            f"{_med([m.rss_mb for m in ms]):.0f}",
            f"{rate / ref:.2f}x" if ref else "1.00x",
            f"{_med(srv):.0%}" if srv else "n/a",
        )
        return rate

    bare = got["bare"]
    bare_proc = row("bare loop (process)", bare, [m.wall_s for m in bare], None)
    cli = row("agenteval run (CLI)", got["cli"], [m.wall_s for m in got["cli"]], bare_proc)
    ratios[(lat, n, "cli")] = cli / bare_proc
    labels = {
        "cli-today": "  today's code",
        "cached": "agenteval run --cache (replayed)",
        "cached-today": "  today's code",
    }
    for name, label in labels.items():
        if name in got:
            rate = row(label, got[name], [m.wall_s for m in got[name]], bare_proc)
            ratios[(lat, n, name)] = rate / bare_proc
    for name, ms in got.items():
        if not name.startswith("peer:"):
            continue
        failed = [m.rc for m in ms if m.rc != 0]
        if failed:  # a peer that failed has no rate worth printing
            label, why = name[5:] + " (process)", f"failed (exit {failed[0]})"
            table.add(f"{lat:g} ms", f"{n:,}", label, why, *[""] * (len(table.headers) - 4))
            continue
        rate = row(name[5:] + " (process)", ms, [m.wall_s for m in ms], bare_proc)
        ratios[(lat, n, name)] = rate / bare_proc
    bare_loop = row(
        "bare loop (in-process)", bare, [m.extra["loop_s"] for m in bare], None, inproc=True
    )
    ev = got["evaluate"]
    api = row(
        "evaluate() (in-process)", ev, [m.extra["loop_s"] for m in ev], bare_loop, inproc=True
    )
    ratios[(lat, n, "evaluate")] = api / bare_loop


def _same_output(a: Path, b: Path) -> str | None:
    """None when two rescored runs hold byte-identical trials.jsonl and equal summaries."""
    if (a / "trials.jsonl").read_bytes() != (b / "trials.jsonl").read_bytes():
        return f"{a}/trials.jsonl and {b}/trials.jsonl differ"
    sa, sb = (json.loads((d / "run.json").read_text())["summary"] for d in (a, b))
    for s in (sa, sb):
        s.pop("run_id", None)  # a new id per run
    return None if sa == sb else f"the summaries of {a} and {b} differ"


def rescore(
    n: int, work: Path, rounds: int, baseline: Path | None, processes: int
) -> tuple[Table, dict[str, float]]:
    """``agenteval rescore`` of ``n`` generated trials: this code and (``baseline``) today's,
    one process and ``--processes``, alternating; every output checked complete and the
    same bytes (trials.jsonl) and summary as the first one. Rates are trials/s (wall)."""
    src = work / "rescore-src"
    t0 = time.perf_counter()
    write_rescore_run(src, n)
    print(f"  generated {n:,} trials in {time.perf_counter() - t0:.1f}s", flush=True)
    codes = {"new": code_src()} | ({"today": baseline} if baseline else {})
    variants = [(code, p) for code in codes for p in (1, processes)]
    got: dict[tuple[str, int], list[Measured]] = {v: [] for v in variants}
    reference: Path | None = None
    for r in range(rounds):
        for code, procs in variants[r % len(variants) :] + variants[: r % len(variants)]:
            out = work / f"rescore-{code}-{procs}-{r}"
            cmd = [PY, "-m", "agenteval", "rescore", str(src), "--out", str(out), "--quiet"]
            cmd += ["--processes", str(procs)] if procs > 1 else []
            m = measure(cmd, env=env_for(codes[code]))
            if m.rc != 0:
                _fail(f"agenteval rescore ({code}, {procs} process(es))", m)
            problem = check_scored(out, n, SCORERS)
            if problem is None and reference is not None:
                problem = _same_output(reference, out)
            if problem:
                sys.exit(f"agenteval rescore ({code}, {procs} process(es)): {problem}")
            if reference is None:
                reference = out
            else:
                shutil.rmtree(out)
            got[(code, procs)].append(m)
            print(f"  rescore {code} x{procs} round {r + 1}: {m.wall_s:.2f}s", flush=True)
    applied: dict[str, float] = {}
    for code, where in codes.items():
        a = measure([PY, str(BENCH / "scorers_child.py"), str(src)], env=env_for(where))
        if a.rc != 0:
            _fail("Scorers.apply", a)
        info = a.json_line()
        applied[code] = info["n"] / info["apply_s"]
    table = Table(
        "what",
        "trials",
        "wall s",
        "spread s",
        "CPU s",
        "trials/s",
        "trials/CPU s",
        "RSS MB",
        "vs today",
        "vs 1 process",
    )
    rates: dict[str, float] = {}
    for code, procs in variants:
        ms = got[(code, procs)]
        wall, cpu = _med([m.wall_s for m in ms]), _med([m.cpu_s for m in ms])
        rate = n / wall
        rates[f"{code}x{procs}"] = rate
        label = "agenteval rescore (process)" if code == "new" else "  today's code"
        if procs > 1:
            label = f"agenteval rescore --processes {procs}" + (
                "" if code == "new" else ", today's"
            )
        table.add(
            label,
            f"{n:,}",
            f"{wall:.2f}",
            f"{min(m.wall_s for m in ms):.2f}-{max(m.wall_s for m in ms):.2f}",
            f"{cpu:.2f}",
            f"{rate:,.0f}",
            f"{n / cpu:,.0f}",
            f"{_med([m.rss_mb for m in ms]):.0f}",
            "",
            f"{rate / rates[f'{code}x1']:.2f}x" if procs > 1 else "",
        )
    if "today" in codes:  # the ratios of the new code's rows to today's
        for i, (code, procs) in enumerate(variants):
            if code == "new":
                row = list(table.rows[i])
                row[8] = f"{rates[f'newx{procs}'] / rates[f'todayx{procs}']:.2f}x"
                table.rows[i] = tuple(row)
    for code in codes:
        label = f"Scorers.apply alone ({SCORERS} scorers)" + ("" if code == "new" else ", today's")
        extra = (
            f"{applied['new'] / applied['today']:.2f}x"
            if code == "new" and "today" in codes
            else ""
        )
        table.add(label, f"{n:,}", "", "", "", f"{applied[code]:,.0f}", "", "", extra, "")
        rates[f"apply-{code}"] = applied[code]
    if reference is not None:
        shutil.rmtree(reference)
    return table, rates


def _startup_env(where: Path, pycache: Path) -> dict[str, str]:
    """The environment of a start-up measurement of the agenteval under ``where``: bytecode
    cached (``PYTHONPYCACHEPREFIX``, so a read-only tree gets it too) as an installed
    package has it; ``PYTHONDONTWRITEBYTECODE`` would make every start compile from source."""
    env = env_for(where) or dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def startup(
    work: Path, rounds: int, baseline: Path | None, *, smoke: bool = False
) -> tuple[Table, float]:
    """Wall and CPU time (spawn to exit) of ``agenteval --help``, ``agenteval score --help``,
    ``agenteval report RUN`` on a one-case run and ``agenteval run`` on one case against the
    0 ms endpoint: this code and today's, alternating, after one round that fills the
    bytecode cache; median of ``max(rounds, 5)`` (one round in smoke mode)."""
    dataset = write_run_dataset(work / "one-case.jsonl", 1)
    codes = {"new": code_src()} | ({"today": baseline} if baseline else {})
    envs = {c: _startup_env(Path(w), work / "pycache") for c, w in codes.items()}
    report_run = work / "one-case-run"

    def run_one(out: Path) -> list[str]:
        cmd = ["run", str(dataset), "--endpoint", srv.base_url, "--model", "m", "--quiet"]
        return [*cmd, "--out", str(out)]

    commands: dict[str, Callable[[Path], list[str]]] = {
        "agenteval --help": lambda out: ["--help"],
        "agenteval score --help": lambda out: ["score", "--help"],
        "agenteval report RUN (one case)": lambda out: ["report", str(report_run)],
        "agenteval run, one case": run_one,
    }
    got: dict[tuple[str, str], list[Measured]] = {(w, c): [] for w in commands for c in codes}
    n = 1 if smoke else max(rounds, 5)
    with FakeServer(0) as srv:
        made = measure([PY, "-m", "agenteval", *run_one(report_run)], env=envs["new"])
        if made.rc != 0:
            _fail("agenteval run (one case)", made)
        for i in range(n + (0 if smoke else 1)):  # round 0 fills the bytecode cache
            for what, argv in commands.items():
                for code in codes:
                    out = work / f"one-{time.monotonic_ns()}"
                    m = measure([PY, "-m", "agenteval", *argv(out)], env=envs[code])
                    if m.rc != 0:
                        _fail(what, m)
                    shutil.rmtree(out, ignore_errors=True)
                    if i or smoke:
                        got[(what, code)].append(m)
    table = Table("what", "wall s (median)", "spread s", "CPU s (median)", "today's CPU / this")
    for what in commands:
        for code in codes:
            ms = got[(what, code)]
            cpu = _med([m.cpu_s for m in ms])
            vs = ""
            if code == "new" and "today" in codes:
                vs = f"{_med([m.cpu_s for m in got[(what, 'today')]]) / cpu:.2f}x"
            table.add(
                what + ("" if code == "new" else ", today's code"),
                f"{_med([m.wall_s for m in ms]):.2f}",
                f"{min(m.wall_s for m in ms):.2f}-{max(m.wall_s for m in ms):.2f}",
                f"{cpu:.2f}",
                vs,
            )
    shutil.rmtree(report_run, ignore_errors=True)
    return table, _med([m.wall_s for m in got[("agenteval run, one case", "new")]])


def memory(sizes: list[int], work: Path) -> tuple[Table, list[float]]:
    table = Table("N", "wall s", "samples/s", "CPU s", "peak RSS MB")
    rss: list[float] = []
    with FakeServer(0) as srv:
        for n in sizes:
            dataset = write_run_dataset(work / f"mem-{n}.jsonl", n)
            out = work / f"mem-{n}"
            cmd = [*agenteval_cmd(), "run", str(dataset), "--endpoint", srv.base_url]
            cmd += ["--model", "m", "--concurrency", "100", "--quiet", "--out", str(out)]
            m = measure(cmd, server=srv)
            if m.rc != 0:
                _fail("agenteval run", m)
            problem = check_run(out, n, SCORERS)
            if problem:
                sys.exit(f"agenteval run: incomplete run: {problem}")
            shutil.rmtree(out)
            rss.append(m.rss_mb)
            table.add(
                f"{n:,}",
                f"{m.wall_s:.1f}",
                f"{n / m.wall_s:,.0f}",
                f"{m.cpu_s:.1f}",
                f"{m.rss_mb:.0f}",
            )
            print(f"  memory N={n}: {m.rss_mb:.0f} MB", flush=True)
    return table, rss


def _verdict(ok: bool) -> str:
    return "MET" if ok else "NOT MET"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="N = 2,000 only")
    mode.add_argument("--smoke", action="store_true", help="tiny sizes (N = 50), one round")
    p.add_argument("--rounds", type=int, help="measurements per harness (median; default 3)")
    p.add_argument("--peers", default="", help=f"comma-separated, among {', '.join(PEERS)}")
    p.add_argument("--run-n", help="comma-separated N of the throughput benchmark")
    p.add_argument("--latencies", help="comma-separated endpoint latencies in ms")
    p.add_argument("--no-throughput", action="store_true", help="skip the run benchmark")
    p.add_argument("--no-rescore", action="store_true", help="skip the scorer benchmark")
    p.add_argument("--no-startup", action="store_true", help="skip the start-up benchmark")
    p.add_argument("--no-memory", action="store_true", help="skip the memory benchmark")
    p.add_argument("--rescore-n", type=int, help="trials to rescore (default 100,000)")
    p.add_argument("--memory-n", type=int, help="the large N of the memory benchmark")
    p.add_argument(
        "--baseline-src",
        help="a src folder of today's code (e.g. ../base/src): measured beside this one",
    )
    p.add_argument("--work", help="scratch directory (default: a new temporary one, removed)")
    args = p.parse_args(argv)

    if args.smoke:
        ns, lats, rounds, resc, mem = [50], [0.0], 1, 200, [50, 200]
    elif args.quick:
        ns, lats, rounds, resc, mem = [2000], [50.0, 0.0], 3, 100_000, [2000, 20_000]
    else:
        ns, lats, rounds, resc, mem = [2000, 20_000], [50.0, 0.0], 3, 100_000, [2000, 200_000]
    rounds = args.rounds or rounds
    ns = [int(x) for x in args.run_n.split(",")] if args.run_n else ns
    lats = [float(x) for x in args.latencies.split(",")] if args.latencies else lats
    resc = args.rescore_n or resc
    mem = [mem[0], args.memory_n or mem[1]]
    peers = [x.strip() for x in args.peers.split(",") if x.strip()]

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="agenteval-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print("agenteval benchmark")
    print(f"command: python bench/run.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"machine: {_machine()}")
    print(f"load average at start: {_load()}")
    print(f"agenteval: {' '.join(agenteval_cmd())}; concurrency 100; median of {rounds}\n")
    try:
        base = Path(args.baseline_src) if args.baseline_src else None
        results: list[tuple[str, bool]] = []
        ratios: dict[tuple[float, int, str], float] = {}
        if not args.no_throughput:
            print("== throughput ==", flush=True)
            tput, ratios = throughput(lats, ns, rounds, work, peers, base)
            print(tput.render(), "\n", flush=True)
        for (lat, n, who), r in sorted(ratios.items()):
            if who in ("cli", "evaluate", "cached"):
                name = {"cli": "agenteval run", "evaluate": "evaluate()"}.get(
                    who, "agenteval run --cache (replayed)"
                )
                results.append(
                    (
                        f"{name} >= {TARGET_RATIO}x bare loop at {lat:g} ms, N={n:,}: {r:.2f}x",
                        r >= TARGET_RATIO,
                    )
                )
        if not args.no_rescore:
            print(f"== scorer throughput ({resc:,} trials, every deterministic scorer) ==")
            table, rates = rescore(resc, work, rounds, base, 2)
            print(table.render(), "\n", flush=True)
            cli_rate, apply_rate = rates["newx1"], rates["apply-new"]
            results.append(
                (
                    f"rescore --processes 2 >= {TARGET_PROCS}x one process:"
                    f" {rates['newx2'] / cli_rate:.2f}x",
                    rates["newx2"] >= TARGET_PROCS * cli_rate,
                )
            )
            results.append(
                (
                    f"rescore >= {TARGET_RESCORE:,.0f} trials/s (one core):"
                    f" agenteval rescore {cli_rate:,.0f}/s",
                    cli_rate >= TARGET_RESCORE,
                )
            )
            results.append(
                (f"  Scorers.apply alone {apply_rate:,.0f}/s", apply_rate >= TARGET_RESCORE)
            )
        if not args.no_startup:
            print("== start-up (help, report of one case, run on one case) ==", flush=True)
            table, first = startup(work, rounds, base, smoke=args.smoke)
            print(table.render(), "\n", flush=True)
            results.append(
                (
                    f"start-up of agenteval run on one case <= {TARGET_START} s: {first:.2f} s",
                    first <= TARGET_START,
                )
            )
        if not args.no_memory:
            print(f"== memory (agenteval run, 0 ms latency, N = {mem[0]:,} vs {mem[1]:,}) ==")
            table, rss = memory(mem, work)
            print(table.render(), "\n", flush=True)
            results.append(
                (
                    f"peak RSS at N={mem[1]:,} within {TARGET_RSS}x of N={mem[0]:,}:"
                    f" {rss[1] / rss[0]:.2f}x",
                    rss[1] <= TARGET_RSS * rss[0],
                )
            )
        print("== targets ==")
        for text, ok in results:
            print(f"[{_verdict(ok):>7}] {text}")
        print(
            f"\nload average at end: {_load()}; benchmark took {time.perf_counter() - started:.0f}s"
        )
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
