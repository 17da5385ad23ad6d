"""MCP servers in the mcpServers shape other MCP clients use, read by the service's own configuration."""

from __future__ import annotations

import json

import pytest

from service.config import ConfigError, load_config
from service.mcp_servers import McpServerConfig, expand

CLIENT_FILE = {
    "mcpServers": {
        "files": {
            "command": "npx",
            "args": ["-y", "server-filesystem", "/data"],
            "env": {"LOG": "warn"},
            "cwd": "/srv",
        },
        "crm": {
            "type": "streamable-http",
            "url": "https://crm.example/mcp",
            "headers": {"X-Tenant": "acme"},
            "bearer_token": "${CRM_TOKEN}",
        },
        "legacy": {"type": "sse", "url": "https://old.example/sse"},
        "plain": {"url": "https://plain.example/mcp"},
        "off": {"command": "never-started", "disabled": True},
    }
}


def test_the_mcp_servers_mapping_from_a_config_file_becomes_one_server_per_name(tmp_path, monkeypatch) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(CLIENT_FILE))
    monkeypatch.setenv("TGCA_CONFIG", str(path))
    servers = {s.name: s for s in load_config().mcp_servers}
    assert sorted(servers) == ["crm", "files", "legacy", "plain"]  # "off" is disabled
    files = servers["files"]
    assert (files.transport, files.argv(), files.env, files.cwd) == (
        "stdio",
        ["npx", "-y", "server-filesystem", "/data"],
        {"LOG": "warn"},
        "/srv",
    )
    assert servers["crm"].transport == "http" and servers["legacy"].transport == "sse"
    assert servers["plain"].transport == "http"  # a url without a type
    monkeypatch.setenv("CRM_TOKEN", "abc")
    assert servers["crm"].http_headers() == {"X-Tenant": "acme", "Authorization": "Bearer abc"}
    assert servers["crm"].where() == "https://crm.example"  # messages never carry a header or token


def test_the_environment_takes_either_shape(monkeypatch) -> None:
    monkeypatch.setenv("TGCA_MCP_SERVERS", json.dumps({"mcpServers": {"x": {"url": "http://h:1/mcp"}}}))
    assert [(s.name, s.transport) for s in load_config().mcp_servers] == [("x", "http")]
    monkeypatch.setenv("TGCA_MCP_SERVERS", json.dumps([{"name": "y", "transport": "stdio", "command": ["srv"]}]))
    assert [(s.name, s.argv()) for s in load_config().mcp_servers] == [("y", ["srv"])]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"command": ""}, "needs a command"),
        ({"type": "http"}, "needs a url"),
        ({"url": "http://h/mcp", "header": {"a": "b"}}, "header"),  # misspelt: an error naming it
        ({"type": "websocket", "url": "ws://h"}, "transport"),
    ],
)
def test_an_incomplete_or_misspelt_server_is_a_config_error(spec: dict[str, object], problem: str, monkeypatch) -> None:
    monkeypatch.setenv("TGCA_MCP_SERVERS", json.dumps({"bad": spec}))
    with pytest.raises(ConfigError, match=problem):
        load_config()


def test_variables_are_read_when_used_and_an_unset_one_is_named() -> None:
    assert expand("Bearer ${A}-${B}", {"A": "1", "B": "2"}) == "Bearer 1-2"
    with pytest.raises(ValueError, match="MISSING_TOKEN is not set"):
        McpServerConfig(name="x", url="http://h", bearer_token="${MISSING_TOKEN}").http_headers()


def test_vs_code_servers_key_and_other_clients_interface_keys_are_read(monkeypatch) -> None:
    monkeypatch.setenv(
        "TGCA_MCP_SERVERS",
        json.dumps(
            {
                "servers": {
                    "x": {
                        "type": "http",
                        "url": "http://h:1/mcp",
                        "autoApprove": ["t"],
                        "timeout": 60,
                        "alwaysAllow": [],
                    }
                }
            }
        ),
    )
    assert [(s.name, s.transport) for s in load_config().mcp_servers] == [("x", "http")]


def test_an_error_never_shows_a_token_expanded_into_the_url(monkeypatch) -> None:
    monkeypatch.setenv("KEY", "sekrit")
    server = McpServerConfig(name="x", url="https://h/mcp?key=${KEY}")
    said = server.said(ConnectionError("cannot reach https://h/mcp?key=sekrit"))
    assert "sekrit" not in said and said == "cannot reach https://h"


def test_an_error_never_shows_a_password_in_the_url() -> None:
    server = McpServerConfig(name="x", url="https://bot:Pa@ss w0rd@h:8443/mcp")
    said = server.said(ConnectionError("cannot reach https://bot:Pa@ss w0rd@h:8443/mcp"))
    assert server.where() == "https://h:8443" and said == "cannot reach https://h:8443"
