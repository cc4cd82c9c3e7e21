"""The ``--agent tool-loop`` options of ``agenteval run``, without importing the tool loop.

Kept apart from :mod:`agenteval.cli._tool_loop` (which builds the agent) so that building
the command line (every ``agenteval run``) does not import the tool set, MCP and JSON-tool
machinery that only ``--agent tool-loop`` uses.
"""

from __future__ import annotations

import argparse

from agenteval.agents.tool_formats import TOOL_FORMATS


def add_arguments(group: argparse._ArgumentGroup) -> None:
    """Add the tool-loop options: ``--tools``, ``--mcp``, ``--mcp-url``, ``--max-turns``,
    ``--answer-on-last-turn``, ``--tool-format``."""
    group.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="tool-loop: a Python module (or .py file) whose public functions are the tools;"
        " schemas come from type hints and docstrings (repeatable)",
    )
    group.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar='"COMMAND ARGS"',
        help="tool-loop: an MCP server started as a process, spoken to over stdio (repeatable)",
    )
    group.add_argument(
        "--mcp-url",
        action="append",
        default=[],
        metavar="URL",
        help="tool-loop: an MCP server over streamable HTTP (repeatable)",
    )
    group.add_argument(
        "--max-turns",
        type=int,
        default=10,
        metavar="N",
        help="tool-loop: model requests per trial before it fails with max_turns (10)",
    )
    group.add_argument(
        "--answer-on-last-turn",
        action="store_true",
        help="tool-loop: on the last allowed turn ask for an answer instead of more tool calls",
    )
    group.add_argument(
        "--tool-format",
        choices=TOOL_FORMATS,
        default="native",
        help="tool-loop: 'native' OpenAI tool calls (default), or 'json' replies constrained"
        " by response_format, for models whose chat template has no tool support",
    )
