"""``agenteval demo``: an offline, deterministic tour — data, two agents, reports, gate.

Builds a small shop (SQLite: customers, orders, documents with one planted prompt
injection) and a 34-case dataset (four of them conversations that change orders), runs a
careful and a sloppy agent over it, prints both summaries and asks the gate whether the
sloppy agent may replace the careful one (it is blocked, and the output says why). No
network, no API key, no model: the two agents are rule-based stand-ins for an LLM agent
that call the real tools. The run directories stay for ``agenteval report`` (each has a
report.html).

--local-model also evaluates a real model, SmolLM2-135M-Instruct on llama.cpp, through the
built-in tool loop (needs the 'local' extra; see docs/demo.md).

Exit status: 0 when the sloppy agent was blocked and the careful one passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
from typing import Any

from agenteval.cli._common import console_for


def register(sub: Any) -> None:
    """Add the ``demo`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="offline demo: two agents over a small shop, summaries, gate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--dir", metavar="DIR", help="where to build the demo (default: a new temporary directory)"
    )
    p.add_argument(
        "--local-model",
        action="store_true",
        help="also evaluate SmolLM2-135M (llama.cpp, offline) through the tool loop",
    )
    p.add_argument(
        "--local-limit",
        type=int,
        default=8,
        metavar="N",
        help="cases for --local-model (default 8; 0 = all 30); a 135M model on CPU is slow",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when the verdicts came out as expected."""
    # imported when this command runs: the other commands start without it
    from agenteval.demo.run import run_demo

    limit = args.local_limit if args.local_limit and args.local_limit > 0 else None
    if args.local_model:
        # imported when this command runs: the other commands start without it
        from agenteval.llm.local_model import smollm2_path

        smollm2_path()  # fail early, with the install command, when the extra is missing
    result = run_demo(args.dir, console_for(args), local_model=args.local_model, local_limit=limit)
    return 0 if result.as_expected else 1
