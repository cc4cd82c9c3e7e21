"""The ``agenteval`` command.

Each subcommand lives in its own module of this package, exposing
``register(subparsers) -> None`` which adds its parser and sets ``func`` (``args -> int``).

Exit codes (docs/cli.md has the table): 0 success; 1 ``gate`` blocked the candidate;
2 unusable input (one line on stderr, no traceback); 3 ``gate`` underpowered; 4 ``run``
with no answers or too many failures; 5 an output could not be written; 130 / 143 / 129
interrupted by SIGINT / SIGTERM / SIGHUP (what finished is kept).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
from collections.abc import Iterator, Sequence

from agenteval._version import __version__
from agenteval.errors import EXIT_INPUT, EXIT_INTERRUPTED, AgentEvalError

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("run", "run", "run an agent over a dataset, record every trial, score it"),
    (
        "score",
        "score",
        "score a trial file (from agenteval or from your own logs) against a dataset",
    ),
    (
        "rescore",
        "rescore",
        "recompute every score of a run into a new run, without calling the agent",
    ),
    ("judge", "judge", "add LLM-judge scores to an existing run (the agent is not called)"),
    (
        "judge-agreement",
        "judge",
        "measure an LLM judge against human labels (accuracy, Cohen's kappa)",
    ),
    ("report", "report", "summarise a run, or write it as HTML / JSON / JUnit XML / Markdown"),
    ("gate", "gate", "block a candidate run that regressed against a baseline (exit 1)"),
    ("compare", "gate", "print runs side by side (no gating)"),
    ("benchmarks", "benchmarks", "list the built-in benchmark suites (and yours)"),
    (
        "import-dataset",
        "benchmarks",
        "convert a DataRobot- or BFCL-style case file to agenteval JSONL",
    ),
    ("demo", "demo", "offline demo: two agents over a small shop, summaries, gate"),
    ("schema", "schema", "print the JSON Schema of a case, trial, run header or stored trial"),
    ("view", "view", "browse the runs under a folder in a local web viewer (read-only)"),
    ("export", "export", "write a run's trials, scores or tool calls as CSV or Parquet"),
    ("proxy", "proxy", "record an agent's OpenAI-compatible model traffic (a forwarding proxy)"),
    (
        "import-traces",
        "import_traces",
        "turn recorded OpenTelemetry traces (OTLP files) into a run to score and gate",
    ),
    (
        "export-otel",
        "export_otel",
        "export a run as OpenTelemetry traces (OTLP/HTTP endpoint or OTLP/JSON file)",
    ),
    ("mcp", "mcp", "serve runs to a coding assistant over MCP (stdio)"),
    (
        "monitor",
        "monitor",
        "score live OpenTelemetry traffic into hourly runs, with metrics and alerts",
    ),
)
"""Every command as (name, module of ``agenteval.cli`` that registers it, its one-line help),
in the order ``agenteval --help`` lists them. ``agenteval --help`` and an unknown command
are answered from this table alone: importing every command module cost 1.15 s of CPU,
against 0.08 s without (load ~8; docs/performance.md, start-up). tests/cli/test_startup.py
holds each help line equal to the one its module registers."""

COMMAND_MODULES = tuple(dict.fromkeys(module for _, module, _ in COMMANDS))
"""The command modules, in registration order."""
COMMAND_OF = {name: module for name, module, _ in COMMANDS if name != module}
"""Commands registered by a module of another name."""
_MODULE_OF = {name: module for name, module, _ in COMMANDS}


FIELD_FLAGS = {
    "benchmark": "--benchmark",
    "cases": "--cases",
    "where": "--where",
    "sample": "--sample",
    "stratify": "--stratify",
    "executor": "--executor",
    "mcp": "--mcp",
    "pii_kinds": "--pii-kinds",
    "ray_address": "--ray-address",
    "alpha": "--alpha",
    "max_drop": "--max-drop",
    "require": "--require",
    "no_new_failures": "--no-new-failures",
    "listen": "--listen",
    "otlp_receiver": "--otlp-receiver",
    "otlp_endpoint": "--otlp-endpoint",
    "max_turns": "--max-turns",
    "capture": "--capture",
    "capture_proxy": "--capture-proxy",
    "resume": "--resume",
    "out": "--out",
    "dir": "--dir",
    "agent": "--agent",
    "tools_module": "--tools",
    "user": "--user",
    "scorer": "--scorer",
    "judge_endpoint": "--judge-endpoint",
    "judge_model": "--judge-model",
    "judge_rubrics": "--rubric",
    "judge_samples": "--judge-samples",
    "judge_concurrency": "--judge-concurrency",
    "judge_temperature": "--judge-temperature",
    "judge_max_tokens": "--judge-max-tokens",
    "cache_mode": "--cache-mode",
    "trust_run": "--trust-run",
    "otlp_wait": "--otlp-wait",
    "window": "--window",
    "replica": "--replica",
    "max_pending_spans": "--max-pending-spans",
    "baseline": "--baseline",
    "export_otlp": "--export-otlp",
    "export_phoenix": "--export-phoenix",
    "allow_run": "--allow-run",
}
"""The fields the layers below name in an InputError, as the flags that set them (an error
below the command line names the field; the command line says the flag)."""


_SPEC_REF = re.compile(r"\s*\(SPEC §[\w.§ ,-]*\)|\s*SPEC §[\w.-]*")
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)(?:\s*<[^`>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``|(?<![\w`])`([^`]{1,200})`(?![\w`])|\*\*(.+?)\*\*", re.S)


def help_text(text: str) -> str:
    """Docstring text as shown by ``--help``: reStructuredText/Markdown markup removed
    (````x````, ```x```, ``**x**`` and ``:func:`~pkg.mod.x``` become ``x``; a ``~`` keeps
    only the last dotted part) and references to the internal spec (``SPEC §2.1``) dropped.
    """

    def role(m: re.Match[str]) -> str:
        target = m.group(1).strip()
        whole = m.group(0)
        return target.rsplit(".", 1)[-1] if ":`~" in whole else target

    text = _SPEC_REF.sub("", text)
    text = _ROLE.sub(role, text)
    return _LITERAL.sub(lambda m: next(g for g in m.groups() if g is not None), text)


class _Parser(argparse.ArgumentParser):
    def format_help(self) -> str:
        """The help text, with docstring markup removed (:func:`help_text`)."""
        return help_text(super().format_help())

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"agenteval: error: {_safe_message(message)}\n")


@contextlib.contextmanager
def flag_errors(**flags: str) -> Iterator[None]:
    """An error in the block naming a field of ``flags`` (``pii_kinds="--pii-kinds"``: an
    InputError's ``field``, or a :class:`~agenteval.errors.FieldName` in any agenteval
    error's message) names the command-line flag instead: the layers below the command
    line name fields."""
    try:
        yield
    except AgentEvalError as e:
        renamed = e.renamed(flags)
        if renamed is None:
            raise
        raise renamed from None


_MENU = ""
"""What :func:`_wanted_module` returns when no command module is needed (``--help``, no
command, an unknown one): the top-level parser lists the commands from :data:`COMMANDS`."""


def _wanted_module(argv: Sequence[str]) -> str:
    """The one command module the arguments need, so start-up imports only that one
    (:data:`_MENU` when none: top-level ``--help`` before any command, or no known command)."""
    for arg in argv:
        if arg in ("-h", "--help"):
            return _MENU  # argparse answers it before it reaches a command
        if not arg.startswith("-"):
            return _MODULE_OF.get(arg, _MENU)
    return _MENU


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``only``, one with just that command module's commands, or
    (``only=""``) one that lists every command without importing any command module."""
    parser = _Parser(
        prog="agenteval",
        description="Evaluate AI agents: run, record, score, report, gate.",
        epilog="Exit codes: 0 ok, 1 gate blocked, 2 unusable input, 3 gate underpowered,"
        " 4 run with no answers or too many failures, 5 cannot write,"
        " 130/143/129 interrupted (SIGINT/SIGTERM/SIGHUP).",
    )
    parser.add_argument("--version", action="version", version=f"agenteval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if only == _MENU:
        for name, _, text in COMMANDS:
            sub.add_parser(name, help=text, add_help=False)
        return parser
    for name in COMMAND_MODULES if only is None else (only,):
        importlib.import_module(f"agenteval.cli.{name}").register(sub)
    return parser


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    """The parser of the subcommand ``name`` (None when there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name is not None:
            found = action.choices.get(name)
            return found if isinstance(found, argparse.ArgumentParser) else None
    return None


def _did_you_mean(parser: argparse.ArgumentParser, unknown: list[str]) -> str:
    """``; did you mean --concurrency?`` for the first unknown option close to one of
    ``parser``'s (difflib), else ""."""
    import difflib

    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    for arg in unknown:
        if arg.startswith("--"):
            close = difflib.get_close_matches(arg.split("=", 1)[0], options, n=1, cutoff=0.75)
            if close:
                return f"; did you mean {close[0]}?"
    return ""


def _safe_message(text: str) -> str:
    """An error message as printed: URL credentials redacted, escape sequences and control
    characters removed (it may quote a URL, a file's content or an agent's output)."""
    # imported when this command runs: the other commands start without it
    from agenteval._util.secrets import redact_urls
    from agenteval._util.untrusted import strip_unsafe

    return strip_unsafe(redact_urls(text))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_wanted_module(argv))
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the subcommand's usage, and the option meant (--concurency)
        target = _subparser(parser, getattr(args, "command", None)) or parser
        target.error(f"unrecognized arguments: {' '.join(unknown)}{_did_you_mean(target, unknown)}")
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    try:
        with flag_errors(**FIELD_FLAGS):
            return int(args.func(args))
    except AgentEvalError as e:
        print(f"agenteval: error: {_safe_message(str(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("agenteval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0


def _entry() -> None:  # pragma: no cover - console script wrapper
    sys.exit(main())
