"""The ``--benchmark`` options of ``agenteval run`` (light: imports no suite or scorer)."""

from __future__ import annotations

import argparse


def add_benchmark_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--benchmark NAME[,NAME...]``, ``--dataset FILE`` and ``--benchmark-file FILE``."""
    g = parser.add_argument_group("benchmarks")
    g.add_argument(
        "--benchmark",
        metavar="NAME[,NAME...]",
        help="run built-in or registered suites (see `agenteval benchmarks`)",
    )
    g.add_argument(
        "--dataset",
        dest="benchmark_dataset",
        metavar="FILE",
        help="with one --benchmark: your own cases instead of the suite's",
    )
    g.add_argument(
        "--benchmark-file",
        action="append",
        default=[],
        metavar="FILE.yaml",
        help="register the benchmarks declared in this file (repeatable)",
    )
