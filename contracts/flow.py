"""Which TrustGraph flow a run was asked on, and that flow's own service topics: taken by the bridge from the
flow definition TrustGraph's config service holds for the agent (`processor:<id>`, written by `tg-start-flow`),
carried in the run's input and, from there, to every activity the run starts (worker/flow_context.py). A run
asked on flow B calls flow B's text-completion, prompt, graph-rag and mcp-tool services, never flow A's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from contracts.topics import pulsar_topic

# The flow definition's client topics the agent's services are reached on (TrustGraph's agent-manager reads
# the same keys: its TextCompletionClientSpec, PromptClientSpec, GraphRagClientSpec, ToolClientSpec).
SERVICE_SPECS = {
    "text-completion": "text-completion",
    "prompt": "prompt",
    "graph-rag": "graph-rag",
    "mcp-tool": "mcp-tool",
}


class FlowTopics(BaseModel):
    """One flow of one workspace: its services' (request, response) Pulsar topics by service name."""

    workspace: str
    flow: str
    services: dict[str, tuple[str, str]] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.workspace}/{self.flow}"

    @classmethod
    def of_definition(cls, workspace: str, flow: str, definition: dict[str, Any]) -> FlowTopics:
        """From the agent's entry of a flow definition (`{"topics": {"text-completion-request": ...}}`); a
        service the definition does not wire is left out (its call then uses the worker's configured topics)."""
        topics = definition.get("topics") or {}
        services = {
            service: (pulsar_topic(topics[f"{spec}-request"]), pulsar_topic(topics[f"{spec}-response"]))
            for service, spec in SERVICE_SPECS.items()
            if topics.get(f"{spec}-request") and topics.get(f"{spec}-response")
        }
        return cls(workspace=workspace, flow=flow, services=services)
