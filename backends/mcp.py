"""MCP tools through the official `mcp` SDK client, over stdio or streamable HTTP.

A session is opened per call: simple and robust against servers that restart (a stdio server costs
about 0.7 s to start here). Tool listings are cached for a while, so planning does not pay it each time.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import structlog
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from temporalio.exceptions import ApplicationError

from contracts.tool_spec import ToolAccess
from service.mcp_servers import McpServerConfig, expand

log = structlog.get_logger(__name__)
LISTING_TTL_S = 300.0
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults for streamable HTTP


@dataclass(frozen=True)
class McpToolInfo:
    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    # The server's own hints (MCP ToolAnnotations). As the spec defaults them, a tool not marked read-only
    # may change things, and destructively unless marked otherwise: it is called only once a human approved.
    read_only: bool = False
    destructive: bool = True
    access: ToolAccess = field(default_factory=ToolAccess)  # the requests (groups, states) it is offered to


@dataclass(frozen=True)
class McpCallResult:
    is_error: bool
    text: str
    structured: dict[str, Any] | None
    output_schema: dict[str, Any] | None


class McpTools:
    def __init__(self, servers: list[McpServerConfig]) -> None:
        self.servers = servers
        self._listing: dict[str, McpToolInfo] = {}
        self._listed_at = 0.0

    @asynccontextmanager
    async def _session(self, server: McpServerConfig) -> AsyncIterator[ClientSession]:
        async with AsyncExitStack() as stack:
            if server.transport == "stdio":
                argv = server.argv()
                params = StdioServerParameters(
                    command=argv[0],
                    args=argv[1:],
                    cwd=server.cwd or None,
                    env={k: expand(v) for k, v in server.env.items()} or None,
                )
                read, write = await stack.enter_async_context(stdio_client(params))
            elif server.transport == "sse":
                read, write = await stack.enter_async_context(
                    sse_client(expand(server.url), headers=server.http_headers())
                )
            else:
                client = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=server.http_headers(), follow_redirects=True, timeout=HTTP_TIMEOUT)
                )
                read, write = await stack.enter_async_context(
                    streamable_http_client(expand(server.url), http_client=client)
                )
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            yield session

    async def list_tools(self) -> dict[str, McpToolInfo]:
        """Every tool of every reachable server; an unreachable server is logged and left out."""
        if self._listing and time.monotonic() - self._listed_at < LISTING_TTL_S:
            return self._listing
        found: dict[str, McpToolInfo] = {}
        for server in self.servers:
            try:
                async with self._session(server) as session:
                    listed = await session.list_tools()
            except Exception as exc:  # one bad server must not hide the others or stop planning
                log.warning("mcp_server_unavailable", server=server.name, error=server.said(exc))
                continue
            for tool in listed.tools:
                hints = tool.annotations
                found.setdefault(
                    tool.name,
                    McpToolInfo(
                        server.name,
                        tool.name,
                        tool.description or "",
                        dict(tool.input_schema or {}),
                        dict(tool.output_schema) if tool.output_schema else None,
                        read_only=bool(hints and hints.read_only_hint),
                        destructive=not (hints and hints.destructive_hint is False),
                    ),
                )
        self._listing, self._listed_at = found, time.monotonic()
        return found

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float) -> McpCallResult:
        tools = await self.list_tools()
        info = tools.get(name)
        if info is None:
            raise ApplicationError(
                f"no connected MCP server offers the tool {name!r}", type="McpUnknownTool", non_retryable=True
            )
        server = next(s for s in self.servers if s.name == info.server)
        where = server.where()
        try:
            async with self._session(server) as session:
                result = await session.call_tool(name, arguments, read_timeout_seconds=timeout_s)
        except ApplicationError:
            raise
        except Exception as exc:
            raise ApplicationError(
                f"MCP server {server.name} ({where}) failed: {server.said(exc)}", type="McpUnavailable"
            ) from exc
        text = "\n".join(getattr(block, "text", "") for block in result.content if getattr(block, "text", ""))
        structured = result.structured_content
        if structured is not None and not text:
            text = json.dumps(structured)
        return McpCallResult(
            is_error=bool(result.is_error), text=text, structured=structured, output_schema=info.output_schema
        )
