"""``agenteval mcp``: an MCP server (stdio) over the runs under one folder.

- :mod:`agenteval.mcp_server.tools`: what each read-only tool does (plain functions);
- :mod:`agenteval.mcp_server.paths`: what a client may name (inside the runs folder only);
- :mod:`agenteval.mcp_server.jobs`: runs started with ``--allow-run``;
- :mod:`agenteval.mcp_server.server`: the tools registered with the ``mcp`` package.

Only :mod:`~agenteval.mcp_server.server` imports ``mcp``; docs/mcp.md describes the tools.
"""

from __future__ import annotations

from agenteval.mcp_server.tools import RunsFolder

__all__ = ["RunsFolder"]
