"""TrustGraph's services for a stack in TrustGraph mode, scripted per test: text-completion (the planner's plan,
every other call's text), graph-rag, the prompt service and tool services, each on the queue TrustGraph 2.x's flow
blueprint wires the agent to, speaking TrustGraph's own schema classes (trustgraph-base 2.11.1) as its Pulsar
backend encodes them. Every request is kept, as TrustGraph decoded it, for the test to read.

graph-rag explains itself as TrustGraph's does (retrieval/graph_rag/graph_rag.py): its trace's question (linked
under the request's `parent_uri`), grounding, exploration, focus and synthesis, built with TrustGraph's own
provenance functions, each written to the flow's triples store and sent to the caller as an `explain` message
before the answer."""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pulsar
from trustgraph.base.serialization import dataclass_to_dict, dict_to_dataclass
from trustgraph.provenance import (
    GRAPH_RETRIEVAL,
    exploration_triples,
    exploration_uri,
    focus_triples,
    focus_uri,
    grounding_triples,
    grounding_uri,
    question_triples,
    question_uri,
    set_graph,
    synthesis_triples,
    synthesis_uri,
)
from trustgraph.schema import (
    Error,
    GraphRagQuery,
    GraphRagResponse,
    Metadata,
    PromptRequest,
    PromptResponse,
    TextCompletionRequest,
    TextCompletionResponse,
    ToolServiceRequest,
    ToolServiceResponse,
    Triples,
)
from trustgraph.schema.retrieval import Source

from contracts.topics import pulsar_topic
from service.connections import pulsar_client

RAG_ANSWER = "Acme Industrial is based in Mexico."
ANSWER = "Acme Industrial is based in Mexico, as the knowledge graph says."
# Prompt template id -> its answer to the request's terms (decoded); a template not scripted is an error, as
# TrustGraph's prompt service answers a template it does not hold.
PromptScript = dict[str, Callable[[dict[str, Any]], PromptResponse]]


@dataclass
class ScriptedTrustGraph:
    pulsar_url: str
    workspace: str
    plan: str  # what the planner's text-completion call (the one with a schema) answers
    answer: str = ANSWER  # what every other text-completion call answers
    prompts: PromptScript = field(default_factory=dict)
    tool_service_queue: str = ""  # a tool service's queue name (`joke` for request:tg:joke and response:tg:joke)
    tool_service_reply: str = ""
    seen: dict[str, list[Any]] = field(
        default_factory=lambda: {"text-completion": [], "graph-rag": [], "prompt": [], "tool-service": []}
    )

    def __post_init__(self) -> None:
        self.client = pulsar_client(self.pulsar_url)
        self._tasks: list[asyncio.Task[None]] = []
        self.rag_traces: list[str] = []  # the question of each trace graph-rag wrote, in order

    def _flow_queues(self, service: str) -> tuple[str, str]:
        return (f"request:tg:{service}:{self.workspace}:default", f"response:tg:{service}:{self.workspace}:default")

    async def start(self) -> None:
        """Every service listens once this returns (a request sent before would be lost: the queues are
        non-persistent, as TrustGraph's)."""
        served = [
            (*self._flow_queues("text-completion"), TextCompletionRequest, self._completion),
            (*self._flow_queues("graph-rag"), GraphRagQuery, self._graph_rag),
            (*self._flow_queues("prompt-rag"), PromptRequest, self._prompt),
        ]
        if self.tool_service_queue:
            served.append(
                (
                    f"request:tg:{self.tool_service_queue}",
                    f"response:tg:{self.tool_service_queue}",
                    ToolServiceRequest,
                    self._tool_service,
                )
            )
        self._store = await self.client.create_producer(
            pulsar_topic(f"flow:tg:triples-store:{self.workspace}:default"), batching_enabled=False
        )
        for request_queue, response_queue, schema, handler in served:
            consumer = await self.client.subscribe(
                pulsar_topic(request_queue),
                f"scripted-{uuid.uuid4().hex[:8]}",
                consumer_type=pulsar.ConsumerType.Shared,
            )
            producer = await self.client.create_producer(pulsar_topic(response_queue), batching_enabled=False)
            self._tasks.append(asyncio.create_task(self._serve(consumer, producer, schema, handler)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.client.close()

    async def _serve(self, consumer: Any, producer: Any, schema: type, handler: Callable[[Any], Any]) -> None:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            responses = handler(dict_to_dataclass(json.loads(message.data()), schema))
            for response in await responses if inspect.isawaitable(responses) else responses:
                await producer.send(
                    json.dumps(dataclass_to_dict(response)).encode(), properties={"id": message.properties()["id"]}
                )

    def _completion(self, request: TextCompletionRequest) -> list[Any]:
        self.seen["text-completion"].append(request)
        text = self.plan if request.schema else self.answer
        return [TextCompletionResponse(response=text, end_of_stream=True, in_token=5, out_token=7, model="tg-llm")]

    async def _graph_rag(self, request: GraphRagQuery) -> list[Any]:
        self.seen["graph-rag"].append(request)
        return [
            *await self._rag_trace(request),
            GraphRagResponse(
                message_type="chunk",
                response=RAG_ANSWER,
                end_of_stream=True,
                end_of_session=True,
                sources=[Source(uri="urn:doc:suppliers", title="Supplier register")],
            ),
        ]

    async def _rag_trace(self, request: GraphRagQuery) -> list[GraphRagResponse]:
        """graph-rag's explain messages, each entity also written to the flow's triples store first."""
        session = str(uuid.uuid4())
        asked = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        question, grounding = question_uri(session), grounding_uri(session)
        exploration, focus, synthesis = exploration_uri(session), focus_uri(session), synthesis_uri(session)
        entities = [
            (question, question_triples(question, request.query, asked, parent_uri=request.parent_uri or None)),
            (grounding, grounding_triples(grounding, question, ["Acme Industrial"])),
            (exploration, exploration_triples(exploration, grounding, 1, entities=["urn:acme"])),
            (focus, focus_triples(focus, exploration, [], session)),
            (synthesis, synthesis_triples(synthesis, focus)),
        ]
        explained = []
        for uri, triples in entities:
            triples = set_graph(triples, GRAPH_RETRIEVAL)
            stored = Triples(metadata=Metadata(id=uri, collection=request.collection or "default"), triples=triples)
            await self._store.send(json.dumps(dataclass_to_dict(stored)).encode())
            explained.append(
                GraphRagResponse(
                    message_type="explain", explain_id=uri, explain_graph=GRAPH_RETRIEVAL, explain_triples=triples
                )
            )
        self.rag_traces.append(question)
        return explained

    def _prompt(self, request: PromptRequest) -> list[Any]:
        self.seen["prompt"].append(request)
        script = self.prompts.get(request.id)
        if script is None:
            return [
                PromptResponse(error=Error(type="llm-error", message=f"ID invalid: {request.id}"), end_of_stream=True)
            ]
        return [script({k: json.loads(v) for k, v in request.terms.items()})]

    def _tool_service(self, request: ToolServiceRequest) -> list[Any]:
        self.seen["tool-service"].append(request)
        return [ToolServiceResponse(response=self.tool_service_reply, end_of_stream=True)]
