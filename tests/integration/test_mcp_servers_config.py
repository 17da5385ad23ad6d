"""MCP servers configured in the mcpServers shape other MCP clients use, against real servers: an HTTP
server that requires a bearer token (sent from the config's `bearer_token`, read from the environment),
and a stdio server started with the config's `args`, `env` and `cwd`."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from backends.mcp import McpTools
from embedded.processes import ManagedProcess, free_port, tcp_open
from service.config import load_config

TOKEN = "t0ken-for-the-test"

# A real MCP server that reports what it started with: the directory, and one environment variable.
PROBE = '''
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="probe")


@server.tool()
def started_with() -> str:
    """Where this server runs and what PROBE_SETTING holds."""
    return f"{os.getcwd()}|{os.environ.get('PROBE_SETTING', '')}"


server.run("stdio")
'''


@pytest_asyncio.fixture(scope="module")
async def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    port = free_port()
    part = ManagedProcess(
        "MCP demo server",
        [
            sys.executable,
            "-m",
            "embedded.mcp_demo_server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--bearer-token-env",
            "DEMO_TOKEN",
        ],
        tmp_path_factory.mktemp("mcp") / "mcp.log",
        ports={"http": port},
        ready=lambda p: tcp_open(port),
        env={"DEMO_TOKEN": TOKEN},
    )
    part.start()
    await part.wait_ready(30)
    yield f"http://127.0.0.1:{port}/mcp"
    part.stop()


def servers_from_file(tmp_path: Path, servers: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> McpTools:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps({"mcpServers": servers}))  # JSON is YAML: a file copied from another client
    monkeypatch.setenv("TGCA_CONFIG", str(path))
    return McpTools(load_config().mcp_servers)


async def test_an_http_server_gets_the_bearer_token_from_the_environment(
    guarded_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRM_TOKEN", TOKEN)
    crm = {"type": "http", "url": guarded_server, "headers": {"X-Tenant": "acme"}, "bearer_token": "${CRM_TOKEN}"}
    mcp = servers_from_file(tmp_path, {"crm": crm}, monkeypatch)
    assert "convert_currency" in await mcp.list_tools()
    result = await mcp.call("convert_currency", {"amount": 10, "from_currency": "GBP", "to_currency": "USD"}, 30)
    assert not result.is_error and json.loads(result.text)["converted"] == 12.7


async def test_without_the_token_or_with_a_wrong_one_the_server_is_left_out(
    guarded_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRM_TOKEN", "wrong")
    for spec in (
        {"url": guarded_server},
        {"url": guarded_server, "bearer_token": "${CRM_TOKEN}"},
        {"url": guarded_server, "bearer_token": "${NOT_SET_ANYWHERE}"},
    ):
        assert await servers_from_file(tmp_path, {"crm": spec}, monkeypatch).list_tools() == {}


async def test_a_stdio_server_starts_with_its_args_env_and_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "probe_server.py").write_text(PROBE)
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.setenv("SECRET_FROM_WORKER", "from-the-worker")
    mcp = servers_from_file(
        tmp_path,
        {
            "probe": {
                "command": sys.executable,
                "args": [str(tmp_path / "probe_server.py")],
                "env": {"PROBE_SETTING": "${SECRET_FROM_WORKER}"},
                "cwd": str(workdir),
            }
        },
        monkeypatch,
    )
    assert "started_with" in await mcp.list_tools()
    result = await mcp.call("started_with", {}, 30)
    assert result.text == f"{workdir}|from-the-worker"
