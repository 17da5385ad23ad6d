"""TrustGraph's own services over Pulsar (text-completion, graph-rag, prompt, mcp-tool), with TrustGraph's
request/response pattern: a request carries an `id` property; its responses, on a shared response topic,
carry the same `id`. Chosen by `tool_backend: trustgraph`, so inside a TrustGraph deployment the agent
uses TrustGraph's LLM and knowledge graph instead of its local ones.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pulsar
import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Consumer, Producer
from temporalio.exceptions import ApplicationError

from backends.flow_scope import current_flow
from backends.llm import Completion
from backends.mcp import McpCallResult, McpToolInfo
from contracts.topics import queue_topic
from contracts.wire import AgentResponse

if TYPE_CHECKING:
    from backends.trustgraph_config import ConfiguredTool, TrustGraphConfig

log = structlog.get_logger(__name__)
SERVICES = ("text-completion", "graph-rag", "prompt", "mcp-tool")
# The queue each service is reached on, where TrustGraph's 2.x flow blueprints wire the agent: its
# `prompt-request` goes to the RAG prompt service (`prompt-rag`), the others to the service's own name.
AGENT_QUEUES = {"prompt": "prompt-rag"}
# TrustGraph error types a later attempt will not fix.
NON_RETRYABLE = {"invalid-request", "bad-request", "not-found", "unauthorized", "forbidden"}


@dataclass(frozen=True)
class GraphRagResult:
    text: str
    sources: int  # source documents the service reported on its final message
    explain: list[AgentResponse]  # its provenance (explain) messages, each an entity of its trace

    @property
    def explained(self) -> bool:
        return bool(self.explain)


class PulsarRequestResponse:
    """Requests out on a request topic, responses routed back by `id` from the response topic."""

    def __init__(self, client: AsyncPulsarClient) -> None:
        self.client = client
        self._producers: dict[str, Producer] = {}
        self._consumers: dict[str, Consumer] = {}
        self._receivers: list[asyncio.Task[None]] = []
        self._pending: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._lock = asyncio.Lock()

    async def _ensure(self, request_topic: str, response_topic: str) -> Producer:
        async with self._lock:
            if response_topic not in self._consumers:
                consumer = await self.client.subscribe(
                    response_topic,
                    f"rr-{uuid.uuid4().hex}",
                    consumer_type=pulsar.ConsumerType.Exclusive,
                    initial_position=pulsar.InitialPosition.Latest,
                )
                self._consumers[response_topic] = consumer
                self._receivers.append(asyncio.create_task(self._receive(consumer)))
            if request_topic not in self._producers:
                self._producers[request_topic] = await self.client.create_producer(
                    request_topic, batching_enabled=False
                )
            return self._producers[request_topic]

    async def _receive(self, consumer: Consumer) -> None:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            queue = self._pending.get((message.properties() or {}).get("id", ""))
            if queue is None:
                continue  # another caller's response on the shared topic
            try:
                await queue.put(json.loads(message.data()))
            except json.JSONDecodeError as exc:
                await queue.put({"error": {"type": "bad-response", "message": f"response is not JSON: {exc}"}})

    async def stream(
        self, request_topic: str, response_topic: str, payload: dict[str, Any], timeout_s: float
    ) -> AsyncIterator[dict[str, Any]]:
        producer = await self._ensure(request_topic, response_topic)
        request_id = str(uuid.uuid4())
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._pending[request_id] = queue
        try:
            await producer.send(json.dumps(payload).encode(), properties={"id": request_id})
            while True:
                try:
                    response = await asyncio.wait_for(queue.get(), timeout_s)
                except TimeoutError as exc:
                    raise ApplicationError(
                        f"TrustGraph service on {request_topic} did not answer within {timeout_s:.0f}s",
                        type="TrustGraphTimeout",
                    ) from exc
                error = response.get("error")
                if error:
                    kind = error.get("type") or "error"
                    raise ApplicationError(
                        f"TrustGraph service on {request_topic} answered {kind}: {error.get('message', '')}",
                        type="TrustGraphError",
                        non_retryable=kind in NON_RETRYABLE,
                    )
                yield response
        finally:
            self._pending.pop(request_id, None)

    async def close(self) -> None:
        for task in self._receivers:
            task.cancel()
        await self.client.close()


class TrustGraphServices:
    def __init__(
        self,
        rr: PulsarRequestResponse,
        workspace: str,
        flow: str,
        collection: str = "default",
        timeout_s: float = 120.0,
        topic_overrides: dict[str, str] | None = None,
    ) -> None:
        self.rr = rr
        self.collection = collection
        self.timeout_s = timeout_s
        overrides = topic_overrides or {}
        self.topics = {
            service: (
                overrides.get(f"{service}.request")
                or queue_topic("request", AGENT_QUEUES.get(service, service), workspace, flow),
                overrides.get(f"{service}.response")
                or queue_topic("response", AGENT_QUEUES.get(service, service), workspace, flow),
            )
            for service in SERVICES
        }

    def route(self, service: str) -> tuple[str, str]:
        """The (request, response) topics of `service` for the current activity: its run's flow's own, as the
        flow definition wires them, else the configured ones (workspace, flow and `trustgraph_topics`)."""
        flow = current_flow()
        if flow is not None and service in flow.services:
            return flow.services[service]
        return self.topics[service]

    async def _final(self, service: str, payload: dict[str, Any], done: str | None = None) -> list[dict[str, Any]]:
        """The responses to one request: the first one (a non-streaming answer, as TrustGraph's own client
        reads it), or with `done`, every one up to the one whose `done` flag is set."""
        request_topic, response_topic = self.route(service)
        responses = []
        async for response in self.rr.stream(request_topic, response_topic, payload, self.timeout_s):
            responses.append(response)
            if done is None or response.get(done):
                break
        return responses

    async def text_completion(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> Completion:
        payload = {
            "operation": "completion",
            "system": system,
            "prompt": prompt,
            "streaming": False,
            "response_format": "json" if schema else None,
            "schema": schema,
        }
        responses = await self._final("text-completion", payload)
        last = responses[-1]
        return Completion(
            text="".join(r.get("response") or "" for r in responses),
            model=last.get("model") or "",
            in_tokens=last.get("in_token"),
            out_tokens=last.get("out_token"),
        )

    async def graph_rag(self, query: str, collection: str = "", parent_uri: str = "") -> GraphRagResult:
        """`collection`: the request's; "": the configured `trustgraph_collection`. `parent_uri`: what graph-rag
        links its trace's question under (a step of the caller's trace), as TrustGraph's agent asks it."""
        payload = {"query": query, "collection": collection or self.collection, "streaming": False}
        if parent_uri:
            payload["parent_uri"] = parent_uri
        responses = await self._final("graph-rag", payload, "end_of_session")
        explain = [
            AgentResponse(
                message_type="explain",
                explain_id=r.get("explain_id") or "",
                explain_graph=r.get("explain_graph"),
                explain_triples=r.get("explain_triples") or [],
            )
            for r in responses
            if r.get("message_type") == "explain" and r.get("explain_id")
        ]
        text = "".join(r.get("response") or "" for r in responses if r.get("message_type") != "explain")
        return GraphRagResult(text=text, sources=len(responses[-1].get("sources") or []), explain=explain)

    async def prompt(self, template: str, terms: dict[str, Any]) -> str:
        # TrustGraph's prompt service takes every term as a JSON string.
        payload = {"id": template, "terms": {k: json.dumps(v) for k, v in terms.items()}, "streaming": False}
        responses = await self._final("prompt", payload)
        text = "".join(r.get("text") or "" for r in responses)
        return text or responses[-1].get("object") or ""

    async def mcp_tool(self, name: str, parameters: dict[str, Any]) -> str:
        payload = {"name": name, "parameters": json.dumps(parameters)}
        responses = await self._final("mcp-tool", payload)
        last = responses[-1]
        return last.get("text") or last.get("object") or ""


class TrustGraphLLM:
    """The LLMClient interface over TrustGraph's text-completion service."""

    def __init__(self, services: TrustGraphServices) -> None:
        self.services = services
        self.base_url = services.topics["text-completion"][0]
        self.logprobs = False  # TrustGraph's text-completion gives no token log-probabilities

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
    ) -> Completion:
        """`logprobs` is not served: TrustGraph's text-completion gives none (the evidence then lacks them)."""
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        if len(turns) == 1:
            prompt = turns[0]["content"]
        else:  # a repair round: earlier turns become a transcript
            prompt = "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in turns)
        return await self.services.text_completion(system, prompt, json_schema)

    async def aclose(self) -> None:
        await self.services.rr.close()


class TrustGraphMcp:
    """McpTool over TrustGraph's mcp-tool service: the tools configured by name (`trustgraph_mcp_tools`) and the
    `tool` entries of type mcp-tool in TrustGraph's config (with their arguments and groups), called by name."""

    def __init__(
        self, services: TrustGraphServices, tools: dict[str, str], config: TrustGraphConfig | None = None
    ) -> None:
        self.services = services
        self.tools = tools  # name -> description
        self.config = config

    def _configured(self) -> dict[str, ConfiguredTool]:
        return self.config.current.of_kind("mcp-tool") if self.config is not None else {}

    async def list_tools(self) -> dict[str, McpToolInfo]:
        found = {
            name: McpToolInfo("trustgraph", name, text, {"type": "object"}, None) for name, text in self.tools.items()
        }
        for name, t in self._configured().items():
            found[name] = McpToolInfo("trustgraph", name, t.description, t.input_schema(), None, access=t.access)
        return found

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float) -> McpCallResult:
        configured = self._configured().get(name)
        # A configured tool calls the MCP tool its entry names (TrustGraph's `mcp-tool` key).
        target = str(configured.data.get("mcp-tool") or name) if configured is not None else name
        text = await self.services.mcp_tool(target, arguments)
        return McpCallResult(is_error=False, text=text, structured=None, output_schema=None)
