"""The options that put trials on worker processes or a Ray cluster (``run``, ``rescore``,
``judge``)."""

from __future__ import annotations

import argparse
from typing import Any


def add_executor_args(p: argparse.ArgumentParser) -> None:
    """``--processes N``, ``--executor {process,ray}``, ``--ray-address ADDR``."""
    g = p.add_argument_group("workers (docs/scale.md)")
    g.add_argument(
        "--processes",
        type=_positive_int,
        metavar="N",
        help="compute on N local worker processes (for CPU-bound Python agents and scorers);"
        " this process stays the one writer of the run. With --executor ray: N Ray actors",
    )
    g.add_argument(
        "--executor",
        choices=("process", "ray"),
        help="process: local worker processes (default with --processes); ray: Ray actors"
        " (pip install -e '.[ray]'), on a new local Ray instance or --ray-address",
    )
    g.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster to use (e.g. 127.0.0.1:6379, ray://head:10001, auto);"
        " implies --executor ray",
    )


def executor_from_args(args: argparse.Namespace) -> Any:
    """The :class:`agenteval.executors.Executor` the options ask for, or None (in-process)."""
    # imported when this command runs: the other commands start without it
    from agenteval.errors import InputError
    from agenteval.executors import Executor, resolve

    kind = getattr(args, "executor", None)
    address = getattr(args, "ray_address", None)
    if address and kind == "process":
        raise InputError("--ray-address needs --executor ray", field="--ray-address")
    if address:
        return Executor("ray", getattr(args, "processes", None), address)
    return resolve(getattr(args, "processes", None), kind)


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {s}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {s}")
    return v
