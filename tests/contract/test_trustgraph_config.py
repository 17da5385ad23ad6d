"""TrustGraph's configuration reaches the planner: the worker reads its `tool`, `mcp-tool` and `agent` entries from
the config service at start, and again when the config service pushes a notice, exactly as TrustGraph's own
processors do. The config service here is a stand-in built from TrustGraph's own classes (trustgraph-base
2.11.1: its Pulsar backend, ConfigRequest/ConfigResponse/ConfigPush and their queues) on the broker."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import (
    ConfigPush,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    config_push_queue,
    config_request_queue,
    config_response_queue,
)

from backends.trustgraph_config import CONFIG_TYPES
from embedded.processes import free_port
from tests.contract.test_trustgraph_contract import tg_agent  # noqa: F401 (a fixture)
from tests.contract.test_trustgraph_request_fields import dialog
from tests.integration.test_trustgraph_mode import trustgraph_stand_in

LOOKUP = {
    "type": "mcp-tool",
    "name": "lookup-order",
    "description": "Look up an order by its id",
    "mcp-tool": "orders",
    "group": ["ops"],
    "arguments": [{"name": "order_id", "type": "string", "description": "the order's id"}],
}
TRIAGE = {
    "type": "prompt",
    "name": "triage-note",
    "description": "Write a triage note",
    "template": "triage",
    "group": ["ops"],
    "applicable-states": ["triage"],
}
FETCHES = len(CONFIG_TYPES) + 1  # per load: each type of the workspace, and the template workspace's prompts
SHIPPING = {
    "type": "prompt",
    "name": "shipping-summary",
    "description": "Summarise a shipment",
    "template": "shipping",
    "group": ["ops"],
}


class ConfigService:
    """Answers `getvalues` from `values` and publishes pushes, as TrustGraph's config service does."""

    def __init__(self, pulsar_url: str) -> None:
        self.backend = get_async_pubsub(pulsar_host=pulsar_url)
        self.values: dict[str, dict[str, dict[str, str]]] = {}  # workspace -> type -> key -> JSON text
        self.version = 1
        self.served: list[ConfigRequest] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.requests = await self.backend.create_consumer(config_request_queue, "config-service", ConfigRequest)
        self.responses = await self.backend.create_producer(config_response_queue, ConfigResponse)
        self.pushes = await self.backend.create_producer(config_push_queue, ConfigPush)
        self._task = asyncio.create_task(self._serve())

    async def _serve(self) -> None:
        while True:
            message = await self.requests.receive()
            await self.requests.acknowledge(message)
            request: ConfigRequest = message.value()
            self.served.append(request)
            entries = self.values.get(request.workspace, {}).get(request.type, {})
            await self.responses.send(
                ConfigResponse(
                    version=self.version,
                    values=[ConfigValue(type=request.type, key=k, value=v) for k, v in entries.items()],
                ),
                properties={"id": message.properties()["id"]},
            )

    async def put(self, workspace: str, config_type: str, entries: dict[str, Any]) -> None:
        """Store the type's entries and push the notice the config service sends after a put."""
        self.values.setdefault(workspace, {})[config_type] = {k: json.dumps(v) for k, v in entries.items()}
        self.version += 1
        await self.pushes.send(ConfigPush(version=self.version, changes={config_type: [workspace]}))

    async def fetched(self, count: int) -> None:
        """Wait until `count` getvalues requests were answered."""
        for _ in range(300):
            if len(self.served) >= count:
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(f"the worker asked for config {len(self.served)} times, not {count}")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.backend.close()


@pytest_asyncio.fixture
async def config_service(pulsar_url: str) -> AsyncIterator[ConfigService]:
    service = ConfigService(pulsar_url)
    await service.start()
    yield service
    await service.close()


def planner_calls(seen: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [r for r in seen["text-completion"] if r.get("schema") and "steps" in r["schema"]["properties"]]


async def test_tools_from_trustgraphs_config_are_offered_and_follow_its_pushes(
    make_stack,
    tg_agent,  # noqa: F811
    config_service: ConfigService,
    unique: str,
) -> None:
    workspace = f"test-{unique}"
    config_service.values[workspace] = {
        "tool": {"lookup-order": json.dumps(LOOKUP), "triage-note": json.dumps(TRIAGE)},
        "mcp-tool": {"orders": json.dumps({"remote-name": "orders", "url": "http://orders:8000/mcp"})},
        "agent": {"additional-context": json.dumps("Answer for the operations team.")},
        "agent-task-type": {"audit": json.dumps({"name": "audit", "framing": "Cite the order ids."})},
    }
    seen: dict[str, list[dict[str, Any]]] = {"text-completion": [], "graph-rag": [], "prompt": []}
    stack = await make_stack(f"http://127.0.0.1:{free_port()}/v1", tool_backend="trustgraph", override_enabled=False)
    listening = asyncio.Event()
    stand_in = asyncio.create_task(trustgraph_stand_in(stack.config.pulsar_url, workspace, seen, listening))
    try:
        await asyncio.wait_for(listening.wait(), 30)
        await config_service.fetched(FETCHES)  # every type the agent reads: read at start
        agent = await tg_agent(stack)
        ops = await dialog(agent, TgAgentRequest(question="Where is Acme Industrial?", group=["ops", "default"]))
        triage = await dialog(
            agent,
            TgAgentRequest(
                question="Where is Acme Industrial?", group=["ops", "default"], state="triage", task_type="audit"
            ),
        )
        unscoped = await dialog(agent, TgAgentRequest(question="Where is Acme Industrial?"))
        # The config service changes the tools and pushes the notice: the next request sees the new set.
        await config_service.put(workspace, "tool", {"shipping-summary": SHIPPING})
        await config_service.fetched(2 * FETCHES)
        after = await dialog(agent, TgAgentRequest(question="Where is Acme Industrial?", group=["ops", "default"]))
    finally:
        stand_in.cancel()
    assert [d[-1].message_type for d in (ops, triage, unscoped, after)] == ["answer"] * 4, [
        r.content for r in ops + triage + unscoped + after
    ]
    plans = planner_calls(seen)
    assert len(plans) == 4
    first, in_triage, default, pushed = (p["system"] for p in plans)
    # The mcp-tool entry is an McpTool choice, with its arguments as the input schema; the agent's additional
    # context is told to the planner.
    assert "lookup-order (Look up an order by its id) input {order_id: string}" in first
    assert "triage-note" not in first  # applicable only in the state "triage"
    assert "Additional context: Answer for the operations team." in plans[0]["prompt"]
    assert "lookup-order" in in_triage and "triage-note: Write a triage note" in in_triage
    # A task type of the agent-task-type config brings its framing (the request has none of its own).
    assert "Additional context: Answer for the operations team.\nCite the order ids." in plans[1]["prompt"]
    assert "Cite the order ids." not in plans[0]["prompt"]
    assert "lookup-order" not in default and "triage-note" not in default  # not in the group "default"
    assert "shipping-summary: Summarise a shipment" in pushed and "lookup-order" not in pushed
