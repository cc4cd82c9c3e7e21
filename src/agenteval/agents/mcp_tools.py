"""MCP servers as tools of the built-in tool loop, through the official ``mcp`` SDK.

An :class:`McpServer` reaches one server, either by starting a process and talking over
its stdin/stdout (``command``), or over streamable HTTP (``url``). On :meth:`start` it
initialises a session, lists the server's tools (every page) and returns them as bare
definitions (``inputSchema`` becomes ``parameters``) with a coroutine that calls each one.
It joins a :class:`~agenteval.agents.toolset.ToolSet` through ``add_provider``.

A call's result is the tool's ``structuredContent`` when the server gives one, else the
text of its content blocks joined by newlines (other blocks as JSON). A result with
``isError`` set becomes the call's error, with that same text. A failure to reach the
server mid-run becomes the call's error too; failing to start or initialise is an
``InputError`` naming the server.

The session lives in one background task, from :meth:`start` to :meth:`close`, because the
SDK's transports are context managers that must be entered and left by the same task.
The ``mcp`` package is imported only when a server starts (it is the ``mcp`` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from pathlib import Path
from typing import Any

from agenteval._util.secrets import redact_url, redact_urls
from agenteval.agents.toolset import Invoke, ToolError
from agenteval.errors import InputError

_MAX_PAGES = 100


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


def _describe_error(exc: BaseException) -> str:
    """The leaf errors of ``exc`` on one line, URL credentials redacted."""
    parts = [f"{type(e).__name__}: {e}".rstrip(": ") for e in _leaves(exc)]
    return redact_urls("; ".join(dict.fromkeys(parts))[:2000])[:500]


def _dump(obj: Any) -> Any:
    """An SDK object in its wire form (camelCase keys), whatever the SDK's major version."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(by_alias=True, mode="json", exclude_none=True)
    return obj


def tool_result(raw: Any) -> tuple[Any, str | None]:
    """``(result, error)`` from a ``CallToolResult`` in wire form (see the module docstring)."""
    data = _dump(raw)
    if not isinstance(data, dict):
        return data, None
    texts: list[str] = []
    for block in data.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        else:
            texts.append(json.dumps(block, ensure_ascii=False))
    text = "\n".join(texts)
    if data.get("isError"):
        return None, text or "the MCP tool reported an error"
    structured = data.get("structuredContent")
    if structured is not None:
        return structured, None
    return text, None


class McpServer:
    """One MCP server: ``command`` (argv list or a shell-style string) or ``url``.

    ``env`` adds environment variables for a stdio server (over the SDK's safe defaults);
    ``cwd`` is its working directory. ``startup_timeout_s`` bounds start + initialise +
    listing.
    """

    def __init__(
        self,
        *,
        command: str | list[str] | None = None,
        url: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
        startup_timeout_s: float = 30.0,
    ) -> None:
        if (command is None) == (url is None):
            raise InputError("an MCP server needs exactly one of a command or a URL")
        argv = shlex.split(command) if isinstance(command, str) else list(command or [])
        if command is not None and not argv:
            raise InputError("an MCP server command must not be empty", field="mcp")
        self.argv = argv
        self.url = url
        self.env = env
        self.cwd = cwd
        self.startup_timeout_s = startup_timeout_s
        self.label = f"MCP server '{redact_url(url) if url else shlex.join(argv)}'"
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    def describe(self) -> dict[str, Any]:
        """``{"url": ...}`` (credentials removed) or ``{"command": [...]}`` (environment
        values are not included)."""
        return {"url": redact_url(self.url)} if self.url else {"command": self.argv}

    async def start(self) -> list[tuple[dict[str, Any], Invoke]]:
        """Connect and list the tools. InputError when the server cannot be reached."""
        if self._task is not None:
            raise RuntimeError(f"{self.label} is already started")
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[dict[str, Any]]] = loop.create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready, self._stop))
        try:
            tools = await asyncio.wait_for(asyncio.shield(ready), self.startup_timeout_s)
        except TimeoutError:
            await self.close()
            raise InputError(
                f"{self.label} did not start within {self.startup_timeout_s:g} s"
            ) from None
        except InputError:
            await self.close()
            raise
        return [(d, self._invoker(d["name"])) for d in tools]

    async def close(self) -> None:
        """End the session (and the server process, for stdio). Idempotent."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 10)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except Exception:  # already reported through the ready future
            pass
        self._session = None

    def _transport(self) -> Any:
        if self.url is not None:
            try:
                from mcp.client.streamable_http import streamable_http_client as http_client
            except ImportError:  # mcp 1.x
                from mcp.client.streamable_http import (  # type: ignore[attr-defined,no-redef]
                    streamablehttp_client as http_client,
                )
            return http_client(self.url)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=self.argv[0],
            args=self.argv[1:],
            env=self.env,
            cwd=str(self.cwd) if self.cwd is not None else None,
        )
        return stdio_client(params)

    async def _serve(
        self, ready: asyncio.Future[list[dict[str, Any]]], stop: asyncio.Event
    ) -> None:
        try:
            from mcp import ClientSession
        except ImportError as e:
            ready.set_exception(
                InputError(f"{self.label}: MCP needs the 'mcp' package (pip install mcp): {e}")
            )
            return
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                tools = await self._list_tools(session)
                self._session = session
                ready.set_result(tools)
                await stop.wait()
        except Exception as e:  # transports raise many kinds (and groups)
            if not ready.done():
                ready.set_exception(InputError(f"{self.label}: {_describe_error(e)}"))
        finally:
            self._session = None
            if not ready.done():
                ready.set_exception(InputError(f"{self.label}: closed before it was ready"))

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = _dump(await _list_page(session, cursor))
            for tool in page.get("tools") or []:
                definition: dict[str, Any] = {"name": tool["name"]}
                if tool.get("description"):
                    definition["description"] = tool["description"]
                definition["parameters"] = tool.get("inputSchema") or {
                    "type": "object",
                    "properties": {},
                }
                tools.append(definition)
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return tools

    def _invoker(self, name: str) -> Invoke:
        async def invoke(arguments: dict[str, Any]) -> Any:
            session = self._session
            if session is None:
                raise ToolError(f"{self.label} is not connected")
            try:
                raw = await session.call_tool(name, arguments)
            except Exception as e:  # the model is told, the run goes on
                raise ToolError(f"{self.label}: {_describe_error(e)}") from None
            result, error = tool_result(raw)
            if error is not None:
                raise ToolError(error)
            return result

        return invoke


async def _list_page(session: Any, cursor: str | None) -> Any:
    if cursor is None:
        return await session.list_tools()
    from mcp import types

    params_cls = getattr(types, "PaginatedRequestParams", None)
    if params_cls is not None:
        with contextlib.suppress(TypeError):
            return await session.list_tools(params=params_cls(cursor=cursor))
    return await session.list_tools(cursor)  # mcp 1.x takes the cursor positionally
