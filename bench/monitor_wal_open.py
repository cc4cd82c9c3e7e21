"""The monitor's start on a large write-ahead log: opening it and reading every frame back.

Writes ``--segments`` segments of ``--mib`` MiB (4 KiB frames) once, then opens the log
and reads every frame back in a child process per round, alternating the code under test
with ``--baseline-src`` when given, and prints each one's CPU (user + sys) and peak RSS,
best of ``--rounds``. The replay reads the log a segment at a time (docs/monitor.md,
"Nothing acknowledged is lost"): memory is about one segment, not the whole log.

    python bench/monitor_wal_open.py --baseline-src /work/wt/base/src
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from procs import PY, code_src, env_for, measure

_CHILD = """
import asyncio, json, sys
from agenteval.monitor.wal import WriteAheadLog
wal, frames = WriteAheadLog.open(sys.argv[1])
n = sum(len(f.payload) for f in frames)
asyncio.run(wal.close())
print(json.dumps({"bytes": n}))
"""


def _write_log(d: Path, segments: int, mib: int) -> None:
    sys.path.insert(0, str(code_src()))
    from agenteval.monitor.wal import encode_frame

    frame = encode_frame(1, bytes(range(256)) * 16)
    for seq in range(1, segments + 1):
        (d / f"{seq:012d}.wal").write_bytes(frame * (mib * 256))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segments", type=int, default=4)
    ap.add_argument("--mib", type=int, default=16, help="MiB per segment (16)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline-src", help="another checkout's src folder, run beside")
    args = ap.parse_args()
    sides = [("this", None)] + ([("baseline", args.baseline_src)] if args.baseline_src else [])
    best: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp)
        _write_log(log, args.segments, args.mib)
        for _ in range(args.rounds):
            for name, src in sides:
                m = measure([PY, "-c", _CHILD, str(log)], env=env_for(src or code_src()))
                assert m.rc == 0, m.stderr
                for p in log.iterdir():  # the empty segment each open starts
                    if p.stat().st_size == 0:
                        p.unlink()
                cpu, rss = best.get(name, (float("inf"), float("inf")))
                best[name] = (min(cpu, m.cpu_s), min(rss, m.rss_mb))
    size = args.segments * args.mib
    for name, (cpu, rss) in best.items():
        print(json.dumps({"code": name, "log_mib": size, "cpu_s": round(cpu, 3), "rss_mb": rss}))


if __name__ == "__main__":
    main()
