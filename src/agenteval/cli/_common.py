"""Pieces shared by the commands that write a run (run, score, rescore, judge)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from agenteval.cli import FIELD_FLAGS
from agenteval.errors import InputError, NamedText

if TYPE_CHECKING:
    from rich.console import Console

    from agenteval.rundir import RunWriter
    from agenteval.scorers.config import ScorerConfig, ScorerOverrides
    from agenteval.scoring.apply import Scorers
    from agenteval.scoring.score import ScorerFn
    from agenteval.summary.live import LiveSummary
    from agenteval.summary.model import Summary
    from agenteval.summary.sources import SnapshotIndex

# The names below load on first use, not with the parsers: every command module imports this
# one to build its parser, and rich, the scorers and the run modules cost ~0.4 s of CPU
# at start-up (score --help: 0.50 -> 0.09 s; docs/performance.md, start-up).

PII_KINDS_HELP = "credit_card,national_id,email,ip_address,phone"
"""``agenteval.scorers.pii.PII_KINDS`` as ``--pii-kinds`` shows it (the scorers import the
models; tests/cli/test_startup.py holds the two equal)."""


def add_scorer_args(p: argparse.ArgumentParser) -> None:
    """--scorer, --no-builtin-scorers, --tool-defs, --pii-kinds."""
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
        help=f"kinds pii_leakage looks for (default: all: {PII_KINDS_HELP})",
    )


def pii_kinds_arg(args: argparse.Namespace) -> list[str] | None:
    """``--pii-kinds a,b`` as a list (None when not given)."""
    value = getattr(args, "pii_kinds", None)
    return [k.strip() for k in value.split(",")] if value else None


def scorer_config(args: argparse.Namespace, extra: list[ScorerFn] | None = None) -> ScorerConfig:
    """The scoring options of a command as a :class:`~agenteval.scorers.config.ScorerConfig`."""
    # imported when a command scores: --help starts without the models
    from agenteval.cases.tooldefs import load_tool_file
    from agenteval.scorers.config import ScorerConfig

    builtin = not getattr(args, "no_builtin_scorers", False)
    suite_tools = getattr(args, "suite_tools", None)
    return ScorerConfig(
        builtin=builtin,
        suite_tools=load_tool_file(suite_tools) if builtin and suite_tools else None,
        pii_kinds=pii_kinds_arg(args) if builtin else None,
        custom=list(args.scorer),
        extra=list(extra or []),
    )


def scorer_overrides(args: argparse.Namespace) -> ScorerOverrides:
    """The scoring options of ``rescore`` as overrides of the run's recorded scorers."""
    # imported when a command scores: --help starts without the models
    from agenteval.cases.tooldefs import load_tool_file
    from agenteval.scorers.config import ScorerOverrides

    suite_tools = getattr(args, "suite_tools", None)
    return ScorerOverrides(
        no_builtin=bool(getattr(args, "no_builtin_scorers", False)),
        suite_tools=load_tool_file(suite_tools) if suite_tools else None,
        pii_kinds=pii_kinds_arg(args),
        custom=list(args.scorer),
    )


def build_scorers(args: argparse.Namespace, extra: list[ScorerFn] | None = None) -> Scorers:
    """The scorers a command runs: built-ins (unless disabled) + --scorer + extra."""
    # imported when a command scores: --help starts without the scorers
    from agenteval.scorers.config import build_scorers as _build_scorers

    return _build_scorers(scorer_config(args, extra))


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
    from rich.console import Console  # rich: only a command that prints a summary loads it

    return Console(
        file=sys.stdout,
        highlight=False,
        soft_wrap=False,
        force_terminal=None if not (quiet or ci) else False,
        width=None if sys.stdout.isatty() else 120,
    )


def flagged(text: str) -> str:
    """``text`` with the fields a :class:`~agenteval.errors.NamedText` names shown as the
    flags that set them (``agenteval.cli.FIELD_FLAGS``); other text as it is."""
    return text.renamed(FIELD_FLAGS) if isinstance(text, NamedText) else text


def say(text: str) -> None:
    """What a command tells its user besides its output: ``text`` on stderr, at once (the
    :data:`agenteval._util.say.Say` the command line gives the layers below it)."""
    print(text, file=sys.stderr, flush=True)


def plain(text: str) -> str:
    """Text from untrusted sources made safe to print: escape sequences and controls removed
    (:func:`agenteval._util.untrusted.strip_unsafe`; tab and newline stay)."""
    from agenteval._util.untrusted import strip_unsafe  # its patterns compile on first use

    return strip_unsafe(text)


def render_summary(summary: Summary, console: Console) -> None:
    """The terminal report of a finished run (imported on first use: --quiet never pays)."""
    # imported when this command runs: the other commands start without it
    from agenteval.report import render_terminal

    render_terminal(summary, console)


def finish_run(
    writer: RunWriter, console: Console, *, show: bool = True, live: LiveSummary | None = None
) -> dict[str, Any]:
    """:func:`agenteval.run.finish.finish_run` with the terminal report when ``show``."""
    # imported when a command writes a run: the parsers are built without it
    from agenteval.run import finish as _finish

    return _finish.finish_run(writer, console, render=render_summary if show else None, live=live)


def live_summary(writer: RunWriter, snapshot: SnapshotIndex | None = None) -> LiveSummary:
    """:func:`agenteval.run.finish.live_summary` (its modules load when a run is written)."""
    # imported when a command writes a run: the parsers are built without it
    from agenteval.run.finish import live_summary as _live_summary

    return _live_summary(writer, snapshot)
