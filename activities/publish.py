"""The caller's messages leave through `publish`, the workflow worker's local activity (no server round trip),
and a streamed answer's sentences, which the synthesis activity sends through the same `send_in_order`.

A run's explain entities are built into triples here, never in workflow code, as the worker's `explain` setting
says: inline, each explain message goes out in its place with its entity's core triples; store-only or off, it
is left out. Inline and store-only, `store_explain`, a regular activity the run starts once the batch went out,
writes the documents to the workspace's librarian and every triple to the flow's triples store, linking each
document the librarian confirmed it stored (workflows/explain_store.py says why apart)."""

from __future__ import annotations

import asyncio
from typing import Protocol

import structlog
from temporalio import activity

from contracts.explain import Explained, ExplainMode
from contracts.explain_delivery import OutboxBatch, Published, StoreBatch, StoredEntity
from contracts.explain_documents import document_link, explain_document
from contracts.names import Activities
from contracts.subagent import FAILED_PREFIX
from contracts.topics import is_persistent
from contracts.wire import AgentResponse, EmitInput

log = structlog.get_logger(__name__)


class Publisher(Protocol):
    """Where messages go: service/response_publisher.ResponsePublisher (Pulsar), or a test's recorder. A call
    issues its send before it first waits, so calls made one after another are sent in that order."""

    async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None: ...


class ExplainWriter(Protocol):
    """Where explain entities are kept: ResponsePublisher writes their documents to the workspace's librarian of the
    flow answering on a response topic, and their triples to its triples store, each with the link to its document
    once the librarian confirmed it, as TrustGraph's agent does."""

    def stores_explain(self, response_topic: str) -> bool: ...

    def documents_explain(self, response_topic: str) -> bool: ...

    async def store_explain(self, response_topic: str, collection: str, entities: list[StoredEntity]) -> None: ...


class CompletionSender(Protocol):
    """Sends a sub-goal's completion (an AgentRequest) to TrustGraph's agent: ResponsePublisher does."""

    async def publish_request(self, topic: str, request_id: str, payload: bytes) -> None: ...


def completion_text(response: AgentResponse) -> str:
    """What the supervisor's aggregator is told: the answer, or why there is none (it then synthesises from
    the other sub-goals; an error instead would end the caller's dialog while the siblings still run)."""
    if response.message_type == "error":
        return FAILED_PREFIX + (response.error.message if response.error else response.content)
    return response.content


class PublishActivities:
    """How a run's messages and its trace leave the worker (docs/architecture.md, "Out: messages to the
    caller")."""

    def __init__(self, publisher: Publisher, explain: ExplainMode = "inline") -> None:
        self.publisher = publisher
        self.explain = explain  # the worker's `explain` setting
        # A publisher that can keep explain entities does (Pulsar's); a test's recorder only records.
        self.writer: ExplainWriter | None = publisher if hasattr(publisher, "store_explain") else None  # type: ignore[assignment]

    async def send_in_order(self, message: EmitInput) -> None:
        """Each message is sent without waiting for the one before to be acknowledged, in order (the producer keeps
        it), on a non-persistent topic; a sub-goal's completion, to another topic, waits for them. After a retry,
        messages already sent go out again with the same message_id, which is how clients recognise and drop
        them."""
        sending: list[asyncio.Task[None]] = []
        for response in message.responses:
            if message.subagent is not None and response.end_of_dialog:
                # A sub-goal's run never ends the caller's dialog: TrustGraph's supervisor does, once every
                # sub-goal has reported. Sent again after a retry, it only repeats the same goal's result.
                await all_sent(sending)
                sending = []
                sender: CompletionSender = self.publisher  # type: ignore[assignment]
                await sender.publish_request(
                    message.subagent.topic, message.request_id, message.subagent.completion(completion_text(response))
                )
                log.info(
                    "subagent_completion_sent",
                    request_id=message.request_id,
                    correlation_id=message.subagent.correlation_id,
                    topic=message.subagent.topic,
                )
                continue
            sending.append(asyncio.create_task(self.publisher.publish(message.topic, message.request_id, response)))
            log.debug(
                "publishing",
                request_id=message.request_id,
                message_id=response.message_id,
                message_type=response.message_type,
            )
            if is_persistent(message.topic):
                # One at a time: the embedded broker (pulsar-lite) delivers overlapping writes to a persistent
                # topic more than once (TrustGraph's response topics are non-persistent).
                await all_sent(sending)
                sending = []
        await all_sent(sending)

    @activity.defn(name=Activities.PUBLISH)
    async def publish(self, message: OutboxBatch) -> Published:
        responses = [
            with_triples
            for response in message.responses
            if (with_triples := self._as_sent(message, response)) is not None
        ]
        await self.send_in_order(message.model_copy(update={"responses": responses}))
        stored = (
            self.explain != "off"
            and bool(message.explained)
            and self.writer is not None
            and self.writer.stores_explain(message.topic)
        )
        return Published(explain=self.explain, store=stored)

    def _as_sent(self, message: OutboxBatch, response: AgentResponse) -> AgentResponse | None:
        """An explain message as the caller gets it, inline; nothing otherwise. The run's own: its entity's core
        triples, and no `tg:document` link (its document is written later, off the caller's path, and linked from
        the stored trace only once the librarian confirmed it: store_explain). One the run forwards (a trace of a
        service it called, which that service stored): as it came."""
        if response.message_type != "explain":
            return response
        if self.explain != "inline":
            return None
        explained = message.explained.get(response.delivery_id)
        if explained is None:
            return response
        return response.model_copy(update={"explain_triples": explained.triples(detail=False)})

    def _documents(self, response_topic: str) -> bool:
        return self.writer is not None and self.writer.documents_explain(response_topic)

    @activity.defn(name=Activities.STORE_EXPLAIN)
    async def store_explain(self, batch: StoreBatch) -> None:
        """Every triple of each entity, and its document, written where TrustGraph's agent writes its own."""
        if self.writer is None:
            return
        documents = self._documents(batch.response_topic)
        await self.writer.store_explain(
            batch.response_topic, batch.collection, [stored(explained, documents) for explained in batch.entities]
        )


async def all_sent(sending: list[asyncio.Task[None]]) -> None:
    """Wait for every send; then raise the first failure, if any (the rest were waited for, not left behind)."""
    failures = [r for r in await asyncio.gather(*sending, return_exceptions=True) if isinstance(r, BaseException)]
    if failures:
        raise failures[0]


def stored(explained: Explained, documents: bool) -> StoredEntity:
    """An entity as the store keeps it: all its triples, and its document (when one is written) with the link to
    it, which the writer adds once the librarian confirmed the document."""
    document = explain_document(explained) if documents else None
    link = document_link(explained, document.id) if document is not None else None
    return StoredEntity(explained.explain_id, explained.triples(), document, link)
