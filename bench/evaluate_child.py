"""Run ``agenteval.evaluation.evaluate()`` once in a fresh process and report its timing.

    python bench/evaluate_child.py DATASET.jsonl BASE_URL OUT_DIR [--concurrency 100]

The agent is ``OpenAIChatAgent(BASE_URL, "m", limit=concurrency)``, with every built-in
deterministic scorer (the default). Prints one JSON line: ``{"n", "loop_s", "cpu_s",
"warmup_s"}`` where ``loop_s`` is the wall time of the measured ``evaluate()`` call and
``cpu_s`` the process CPU time spent inside it.

The measured call is the *second* in the process: a first call on the dataset's first 20
cases (into a scratch directory, ``warmup_s``) pays for the modules ``evaluate()`` imports
on first use (~0.4 s), just as the bare loop's timer starts after ``import aiohttp``. Both
in-process rows then measure the loop, not imports; the CLI rows include every start-up
cost.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

from agenteval.agents.openai_chat import OpenAIChatAgent
from agenteval.evaluation import evaluate


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dataset")
    p.add_argument("base_url")
    p.add_argument("out")
    p.add_argument("--concurrency", type=int, default=100)
    args = p.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="agenteval-warmup-"))
    try:
        with open(args.dataset, encoding="utf-8") as f, open(scratch / "w.jsonl", "w") as w:
            w.writelines(islice(f, 20))
        t0 = time.perf_counter()
        warm = OpenAIChatAgent(args.base_url, "m", limit=args.concurrency)
        evaluate(scratch / "w.jsonl", warm, concurrency=args.concurrency, out=scratch / "run")
        warmup_s = time.perf_counter() - t0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    agent = OpenAIChatAgent(args.base_url, "m", limit=args.concurrency)
    c0, t0 = _cpu(), time.perf_counter()
    run = evaluate(args.dataset, agent, concurrency=args.concurrency, out=args.out)
    loop_s, cpu_s = time.perf_counter() - t0, _cpu() - c0
    n = run.summary.get("trials")
    print(json.dumps({"n": n, "loop_s": loop_s, "cpu_s": cpu_s, "warmup_s": warmup_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
