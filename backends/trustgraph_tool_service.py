"""TrustGraph's tool services: a `tool` entry of type `tool-service` names a `tool-service` entry, which holds the
queues the service listens on; the tool entry's own values for the service's `config-params` travel with every
call. Read and called as TrustGraph 2.11.1's agent does (orchestrator/service.py on_tools_config,
react/tools.py ToolServiceImpl, base/tool_service_client.py): one ToolServiceRequest, `config` and `arguments`
as JSON text, answered by ToolServiceResponses on the response queue, matched by the request's `id`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contracts.topics import pulsar_topic

if TYPE_CHECKING:
    from backends.trustgraph import PulsarRequestResponse


@dataclass(frozen=True)
class ToolServiceTarget:
    """Where one configured tool's calls go, and the config values they carry."""

    service: str  # the `tool-service` entry's id
    request_topic: str
    response_topic: str
    config: dict[str, Any] = field(default_factory=dict)


def tool_service_target(tool: dict[str, Any], services: dict[str, dict[str, Any]]) -> ToolServiceTarget:
    """The target of a `tool-service` tool entry; ValueError with TrustGraph's own reasons when the entry or the
    service it names cannot be used."""
    name = tool.get("name")
    reference = tool.get("service")
    if not reference:
        raise ValueError(f"Tool {name} has type 'tool-service' but no 'service' reference")
    if reference not in services:
        raise ValueError(f"Tool {name} references unknown tool-service '{reference}'")
    service = services[reference]
    request_queue, response_queue = service.get("request-queue"), service.get("response-queue")
    if not request_queue or not response_queue:
        raise ValueError(f"Tool-service '{reference}' must define 'request-queue' and 'response-queue'")
    config: dict[str, Any] = {}
    for param in service.get("config-params") or []:
        param_name = param.get("name") if isinstance(param, dict) else param
        if param_name in tool:
            config[param_name] = tool[param_name]
        elif isinstance(param, dict) and param.get("required", False):
            raise ValueError(f"Tool {name} missing required config param '{param_name}'")
    return ToolServiceTarget(
        service=str(reference),
        request_topic=pulsar_topic(str(request_queue)),
        response_topic=pulsar_topic(str(response_queue)),
        config=config,
    )


async def call_tool_service(
    rr: PulsarRequestResponse, target: ToolServiceTarget, arguments: dict[str, Any], timeout_s: float
) -> str:
    """The service's answer: its responses' text up to the one that ends the stream (a service that answers
    once sends that one). An error response raises (PulsarRequestResponse.stream)."""
    payload = {
        "config": json.dumps(target.config) if target.config else "{}",
        "arguments": json.dumps(arguments) if arguments else "{}",
    }
    parts: list[str] = []
    async for response in rr.stream(target.request_topic, target.response_topic, payload, timeout_s):
        parts.append(str(response.get("response") or ""))
        if response.get("end_of_stream", True):
            break
    return "".join(parts)
