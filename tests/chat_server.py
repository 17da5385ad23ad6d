"""Serve the chat API (chat/app.py) in-process on a free port, over a test stack's real Temporal and Pulsar,
and read its server-sent events as a client would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from actions.ontology import Ontology
from activities.actions import ActionTools
from backends.action_history import ActionHistory
from backends.graph_store import GraphStore
from chat.app import create_app
from chat.auth import Authenticator, new_local_token
from chat.dependencies import ChatDeps
from chat.runs import RunStreams
from chat.same_site import answered_hosts
from embedded.processes import free_port
from service.config import HttpIdentity
from service.connections import pulsar_client


@dataclass
class ChatServer:
    url: str
    deps: ChatDeps
    token: str = ""  # open mode's local token ("" when identities are configured)

    @property
    def page_url(self) -> str:
        """The link `up` prints: the page takes the open-mode token from its fragment."""
        return f"{self.url}/#token={self.token}" if self.token else self.url

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.AsyncClient:
        """An API client that shows `token` (default: open mode's local token) as a bearer token."""
        token = self.token if token is None else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(base_url=self.url, timeout=60, headers=headers, **kwargs)


@asynccontextmanager
async def chat_server(
    stack: Any, identities: list[HttpIdentity] | None = None, pulsar_url: str = "", **settings: Any
) -> AsyncIterator[ChatServer]:
    """`stack`: the make_stack fixture's Stack (its config names the topics, graph and ontology); `pulsar_url`:
    where the API reaches the broker (default: the stack's; a test's proxy it can cut); `settings`: ChatDeps
    fields to change (stream limits, allowed origins)."""
    config = stack.config
    client = pulsar_client(pulsar_url or config.pulsar_url)
    streams = RunStreams(client, config.request_topics[0], config.response_topic)
    await streams.start()
    store = GraphStore(config.falkordb_url, config.graph_name)
    actions = (
        ActionHistory(ActionTools(store, Ontology.load(Path(config.ontology_path)))) if config.ontology_path else None
    )
    token = "" if identities else new_local_token()
    deps = ChatDeps(
        temporal=stack.client,
        streams=streams,
        auth=Authenticator(identities or [], token),
        temporal_ui_url="http://127.0.0.1:8233",
        actions=actions,
        graph=store,
        override_keys=config.agent.override_keys,
        hosts=answered_hosts("127.0.0.1", []),
        **settings,
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(deps), host="127.0.0.1", port=port, log_config=None, access_log=False)
    )
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers a flag, not an event
        await asyncio.sleep(0.02)
    try:
        yield ChatServer(url=f"http://127.0.0.1:{port}", deps=deps, token=token)
    finally:
        server.should_exit = True
        await task
        await streams.stop()
        await client.close()
        await store.aclose()


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event id, event) for each server-sent event of a streaming response."""
    event_id, data = "", []
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield event_id, json.loads("\n".join(data))
            data = []
