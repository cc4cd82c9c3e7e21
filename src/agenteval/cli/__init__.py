"""The ``agenteval`` command.

Each subcommand lives in its own module of this package, exposing
``register(subparsers) -> None`` which adds its parser and sets ``func`` (``args -> int``).

Exit codes: 0 success; 1 ``gate`` blocked the candidate; 2 unusable input (bad dataset,
trial file, run directory, config or arguments: one line on stderr, no traceback);
130 interrupted (Ctrl-C; what finished is kept).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from agenteval import __version__
from agenteval.errors import EXIT_INPUT, EXIT_INTERRUPTED, AgentEvalError

COMMAND_MODULES = (
    "run",
    "score",
    "rescore",
    "judge",
    "report",
    "gate",
    "benchmarks",
    "demo",
    "schema",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"agenteval: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="agenteval",
        description="Evaluate AI agents: run, record, score, report, gate.",
        epilog="Exit codes: 0 ok, 1 gate blocked, 2 unusable input, 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"agenteval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"agenteval.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"agenteval.cli.{name}":
                continue  # not built yet
            raise
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    try:
        return int(args.func(args))
    except AgentEvalError as e:
        print(f"agenteval: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("agenteval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0


def _entry() -> None:  # pragma: no cover - console script wrapper
    sys.exit(main())
