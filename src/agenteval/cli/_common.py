"""Pieces shared by the commands that write a run (run, score, rescore, judge)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from rich.console import Console

from agenteval._imports import load_callable
from agenteval.errors import InputError
from agenteval.report.finish import finish_run as finish_run  # re-exported for commands
from agenteval.report.finish import live_summary as live_summary
from agenteval.score import ScorerFn
from agenteval.scorers import builtin_scorers
from agenteval.scoring import Scorers
from agenteval.tooldefs import load_tool_file
from agenteval.untrusted import strip_unsafe


def add_scorer_args(p: argparse.ArgumentParser) -> None:
    """--scorer, --no-builtin-scorers, --tools, --pii-kinds."""
    g = p.add_argument_group("scoring")
    g.add_argument(
        "--scorer",
        action="append",
        default=[],
        metavar="MODULE:FN",
        help="a custom scorer fn(case, trial) (repeatable)",
    )
    g.add_argument(
        "--no-builtin-scorers",
        action="store_true",
        help="run only the --scorer ones (default: every built-in deterministic scorer too)",
    )
    g.add_argument(
        "--tool-defs",
        dest="suite_tools",
        metavar="FILE",
        help="JSON/YAML list of tool definitions for tool_arguments_valid (when neither the"
        " trial nor the case has them)",
    )
    g.add_argument(
        "--pii-kinds",
        metavar="K1,K2",
        help="kinds pii_leakage looks for (default: all: email,phone,card,national_id,ip)",
    )


def build_scorers(args: argparse.Namespace, extra: list[ScorerFn] | None = None) -> Scorers:
    """The scorers a command runs: built-ins (unless disabled) + --scorer + extra."""
    fns: list[ScorerFn] = []
    if not getattr(args, "no_builtin_scorers", False):
        suite_tools = load_tool_file(args.suite_tools) if args.suite_tools else None
        kinds = [k.strip() for k in args.pii_kinds.split(",")] if args.pii_kinds else None
        try:
            fns.extend(builtin_scorers(suite_tools=suite_tools, pii_kinds=kinds))
        except ValueError as e:
            raise InputError(str(e), field="--pii-kinds") from None
    for target in args.scorer:
        fns.append(load_callable(target, what="scorer", option="--scorer"))
    fns.extend(extra or [])
    return Scorers(fns)


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``--param key=value`` pairs as request parameters; values are JSON when they parse."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--param '{pair}' must look like key=value")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def console_for(args: argparse.Namespace) -> Console:
    """Where summaries go: stdout; plain (no colour, no live display) when not a terminal."""
    quiet = bool(getattr(args, "quiet", False))
    ci = bool(os.environ.get("CI"))
    return Console(
        file=sys.stdout,
        highlight=False,
        soft_wrap=False,
        force_terminal=None if not (quiet or ci) else False,
        width=None if sys.stdout.isatty() else 120,
    )


def plain(text: str) -> str:
    """Text from untrusted sources made safe to print: escape sequences and controls removed
    (:func:`agenteval.untrusted.strip_unsafe`; tab and newline stay)."""
    return strip_unsafe(text)
