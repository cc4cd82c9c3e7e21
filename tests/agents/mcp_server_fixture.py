"""A real MCP server for the tests, written with the official ``mcp`` SDK.

Run as ``python mcp_server_fixture.py`` (stdio) or ``python mcp_server_fixture.py http PORT``
(streamable HTTP on 127.0.0.1:PORT, path ``/mcp``). Tools: ``add`` (two integers),
``lookup_city`` (a canary value only this server knows; an unknown city is a tool error
with a message), ``fail`` (always raises: the SDK reports an error without the message).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as _Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

logging.disable(logging.CRITICAL)  # the SDK logs tracebacks of failing tools on stderr

CITIES = {"paris": "CANARY-PARIS-7731", "lyon": "CANARY-LYON-2210"}

server: Any = _Server("agenteval-test-server")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def lookup_city(city: str) -> str:
    """The secret code of a city."""
    code = CITIES.get(city.lower())
    if code is None:
        raise ToolError(f"no city named {city}")
    return code


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"failed on purpose: {reason}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        port = int(sys.argv[2])
        try:
            server.run("streamable-http", host="127.0.0.1", port=port)
        except TypeError:  # mcp 1.x: host/port are settings
            server.settings.host, server.settings.port = "127.0.0.1", port
            server.run("streamable-http")
    else:
        server.run()
