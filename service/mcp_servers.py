"""MCP servers as configured: this service's own list, or the `mcpServers` shape people already keep for
Claude Desktop, Cursor and Claude Code (a mapping from a server's name to its spec; VS Code's `servers`):

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
                  "env": {"LOG_LEVEL": "warn"}, "cwd": "/srv"},
        "crm":   {"type": "http", "url": "https://crm.example/mcp",
                  "headers": {"X-Tenant": "acme"}, "bearer_token": "${CRM_TOKEN}"}}}

A spec with a `url` and no `type` is streamable HTTP; `type` may also be `sse` (the older HTTP transport)
or `stdio`; `"disabled": true` leaves a server out, and other clients' interface keys (`autoApprove`,
`timeout`, ...) are ignored. `${NAME}` in `url`, `args`, `env`, `headers` and
`bearer_token` is read from the worker's environment when a session opens, so secrets stay out of the file."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from contracts.redaction import shown_url

Transport = Literal["stdio", "http", "sse"]
_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}
_VARIABLE = re.compile(r"\$\{(\w+)\}")
# Keys other MCP clients keep for their own user interface (approvals, timeouts, tool filters): meaningless
# here, so a file copied from them is read without them. Any other unknown key is an error.
CLIENT_ONLY_KEYS = {
    "disabled",
    "timeout",
    "autoApprove",
    "alwaysAllow",
    "disabledTools",
    "envFile",
    "description",
    "trust",
    "includeTools",
    "excludeTools",
}


class McpServerConfig(BaseModel):
    """One MCP server whose tools the planner may use: a command speaking stdio, or an HTTP URL."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key (`header`) is an error, not a silent default

    name: str = Field(min_length=1)
    transport: Transport = "stdio"
    command: list[str] = Field(default_factory=list)  # the program and any arguments of its own
    args: list[str] = Field(default_factory=list)  # more arguments (the mcpServers shape keeps them apart)
    env: dict[str, str] = Field(default_factory=dict)  # stdio: set over a minimal default environment
    cwd: str = ""  # stdio: the directory the server starts in
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)  # HTTP: sent with every request
    bearer_token: str = ""  # HTTP: sent as `Authorization: Bearer <token>`

    @model_validator(mode="before")
    @classmethod
    def _mcp_servers_shape(cls, data: Any) -> Any:
        """`type` (any of the spellings clients use) is the transport; without one, a `url` means HTTP."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        kind = data.pop("type", None)
        if kind is not None and "transport" not in data:
            data["transport"] = kind
        if "transport" not in data:
            data["transport"] = "http" if data.get("url") else "stdio"
        if isinstance(data["transport"], str):
            data["transport"] = _TRANSPORTS.get(data["transport"].strip().lower().replace(" ", ""), data["transport"])
        return data

    @field_validator("command", mode="before")
    @classmethod
    def _one_program(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value] if value.strip() else []
        return value

    @model_validator(mode="after")
    def _complete(self) -> McpServerConfig:
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport != "stdio" and not self.url:
            raise ValueError(f"MCP server {self.name!r}: an {self.transport} server needs a url")
        return self

    def argv(self) -> list[str]:
        return [*self.command, *(expand(a) for a in self.args)]

    def where(self) -> str:
        """The address (`scheme://host:port`) or command line, for messages: never a header, nor a token or
        password the URL carries."""
        return shown_url(self.url) if self.url else " ".join([*self.command, *self.args])

    def said(self, error: BaseException) -> str:
        """An error's text with the URL, where it quotes it whole (`${NAME}` values expanded), shown as `where`
        shows it: a token in its query string must not reach logs or a run's history."""
        text = str(error)
        try:
            expanded = expand(self.url)
        except ValueError:
            return text
        return text.replace(expanded, self.where()) if self.url else text

    def http_headers(self) -> dict[str, str]:
        headers = {k: expand(v) for k, v in self.headers.items()}
        if self.bearer_token:
            headers["Authorization"] = f"Bearer {expand(self.bearer_token)}"
        return headers


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`${NAME}` replaced by the environment's value; an unset variable is an error naming it (a request
    sent with an empty token fails later and less clearly)."""
    environ = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        if match.group(1) not in environ:
            raise ValueError(f"the environment variable {match.group(1)} is not set")
        return environ[match.group(1)]

    return _VARIABLE.sub(value, text)


def server_list(value: Any) -> Any:
    """The configured servers as a list: the mcpServers mapping (wrapped in {"mcpServers": ...} or not)
    becomes one entry per name; a list is this service's own shape. A server marked `"disabled": true`
    (as several clients write it) is left out."""
    if isinstance(value, Mapping):
        value = value.get("mcpServers", value.get("servers", value))  # VS Code's mcp.json says "servers"
        if isinstance(value, Mapping):
            value = [{**spec, "name": name} if isinstance(spec, Mapping) else spec for name, spec in value.items()]
    if isinstance(value, list):
        value = [
            {k: v for k, v in spec.items() if k not in CLIENT_ONLY_KEYS} if isinstance(spec, Mapping) else spec
            for spec in value
            if not (isinstance(spec, Mapping) and spec.get("disabled") is True)
        ]
    return value


def demo_mcp_server() -> McpServerConfig:
    return McpServerConfig(name="demo", transport="stdio", command=[sys.executable, "-m", "embedded.mcp_demo_server"])
