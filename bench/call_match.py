"""What ``tool_call_match`` costs: ``agenteval rescore`` with it on vs off, side by side.

    python bench/call_match.py                 # 50,000 trials, 3 rounds
    python bench/call_match.py --n 2000 --rounds 1

One generated run (``bench/gen.py``: realistic trials with 1-4 tool calls each) is
rescored twice per round, alternating which goes first: once as generated (its cases have
no ``expected_calls``, so ``tool_call_match`` is not applicable and costs one check), once
with every case given ``expected_calls`` for its trajectory (``get_order`` with the order
id, a list of fields and an ``$any_of``; ``search_docs`` with a ``$present`` query and a
``$approx`` top_k), in ``unordered`` mode, so every trial goes through the matching.
Every rescored trial must carry every built-in score. Prints trials/s (median of the
rounds) for both and the ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from gen import write_rescore_run
from procs import agenteval_cmd, check_scored, measure

SCORERS = 13


def _expected_calls(case: dict[str, Any]) -> list[dict[str, Any]]:
    oid = case["input"].split("order ")[1].split()[0]
    calls = []
    for name in case["expected_trajectory"]:
        if name == "get_order":
            calls.append(
                {
                    "name": "get_order",
                    "arguments": {
                        "order_id": oid,
                        "fields": {"$any_of": [["total", "status"], ["total"]]},
                    },
                }
            )
        else:
            calls.append(
                {
                    "name": "search_docs",
                    "arguments": {
                        "query": {"$present": True},
                        "top_k": {"$approx": 3, "$tolerance": 2},
                    },
                }
            )
    return calls


def with_expected_calls(src: Path, dest: Path) -> Path:
    """A copy of the run ``src`` whose cases carry ``expected_calls``."""
    shutil.copytree(src, dest)
    lines = []
    for line in (src / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        case["expected_calls"] = _expected_calls(case)
        case["match_mode"] = "unordered"
        lines.append(json.dumps(case))
    (dest / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=50_000, help="trials (default 50,000)")
    p.add_argument("--rounds", type=int, default=3, help="rounds, median reported (default 3)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agenteval-bench-calls-") as tmp:
        work = Path(tmp)
        off = write_rescore_run(work / "off", args.n)
        on = with_expected_calls(off, work / "on")
        rates: dict[str, list[float]] = {"off": [], "on": []}
        for r in range(args.rounds):
            order = ("off", "on") if r % 2 == 0 else ("on", "off")
            for which in order:
                out = work / f"out-{which}"
                src = off if which == "off" else on
                m = measure([*agenteval_cmd(), "rescore", str(src), "--out", str(out), "--quiet"])
                if m.rc != 0:
                    sys.exit(f"rescore ({which}) failed: {m.stderr[-2000:]}")
                problem = check_scored(out, args.n, SCORERS)
                if problem:
                    sys.exit(f"rescore ({which}): {problem}")
                rates[which].append(args.n / m.wall_s)
                shutil.rmtree(out)
    off_rate, on_rate = statistics.median(rates["off"]), statistics.median(rates["on"])
    print(f"agenteval rescore, {args.n:,} trials, median of {args.rounds} rounds")
    print(f"  tool_call_match off (no expected_calls): {off_rate:>10,.0f} trials/s")
    print(f"  tool_call_match on  (expected_calls)   : {on_rate:>10,.0f} trials/s")
    print(f"  on / off: {on_rate / off_rate:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
