"""``agenteval mcp``: serve the runs under a folder to a coding assistant over MCP (stdio).

The assistant starts this command itself (see docs/mcp.md for the configuration) and talks
MCP over its stdin/stdout: list runs, read a summary, the failing trials of a scorer and
one trial, gate two runs. With --allow-run it may also start a run of a dataset (an
``agenteval run`` child process writing a new run directory under the folder); without it,
that tool answers with an error. Run ids, datasets and new runs stay inside the folder.

Needs the ``mcp`` package (``pip install -e '.[mcp]'`` from a checkout); exit 2 without it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agenteval.cli import FIELD_FLAGS
from agenteval.errors import InputError

SERVER_FIELDS = ("allow_run",)
"""The settings of the server the MCP server's text names (its instructions, start_run's
refusal), shown by their flags."""
INSTALL = "agenteval mcp needs the 'mcp' package: pip install -e '.[mcp]'"


def register(sub: Any) -> None:
    """Add the ``mcp`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "mcp",
        help="serve runs to a coding assistant over MCP (stdio)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--runs",
        metavar="DIR",
        default=".",
        help="the folder whose runs are served (default: the current directory)",
    )
    p.add_argument(
        "--allow-run",
        action="store_true",
        help="let the assistant start runs (agenteval run of a dataset in the folder);"
        " off by default",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client closes stdin; 0."""
    if not Path(args.runs).is_dir():  # said before the mcp package is loaded
        raise InputError(f"--runs {args.runs}: is not a directory")
    try:
        # imported when this command runs: the other commands start without it
        from agenteval.mcp_server.server import serve
    except ModuleNotFoundError as e:
        if e.name is not None and (e.name == "mcp" or e.name.startswith("mcp.")):
            raise InputError(INSTALL) from None
        raise
    # the server's own setting by its flag; not the rest of FIELD_FLAGS: a tool's error
    # naming its argument (alpha, agent) names the argument, not a flag
    names = {field: FIELD_FLAGS[field] for field in SERVER_FIELDS}
    return serve(args.runs, allow_run=args.allow_run, names=names)
