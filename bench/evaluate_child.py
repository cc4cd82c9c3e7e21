"""Run ``agenteval.evaluate.evaluate()`` once in a fresh process and report its timing.

    python bench/evaluate_child.py DATASET.jsonl BASE_URL OUT_DIR [--concurrency 100]

The agent is ``OpenAIChatAgent(BASE_URL, "m", limit=concurrency)``, with every built-in
deterministic scorer (the default). Prints one JSON line: ``{"n", "loop_s", "cpu_s"}``
where ``loop_s`` is the wall time of the ``evaluate()`` call alone (imports excluded, as a
Python user who already imported agenteval sees it) and ``cpu_s`` the process CPU time
spent inside it.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

from agenteval.agents.openai_chat import OpenAIChatAgent
from agenteval.evaluate import evaluate


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
    agent = OpenAIChatAgent(args.base_url, "m", limit=args.concurrency)
    c0, t0 = _cpu(), time.perf_counter()
    run = evaluate(args.dataset, agent, concurrency=args.concurrency, out=args.out)
    loop_s, cpu_s = time.perf_counter() - t0, _cpu() - c0
    print(json.dumps({"n": run.summary.get("trials"), "loop_s": loop_s, "cpu_s": cpu_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
