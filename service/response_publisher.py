"""AgentResponse -> superset JSON on the caller's response topic, with the request's `id` property; and a run's
explain entities into the flow's triples store and its workspace's librarian.

Used by the worker's `publish` local activity (how runs send their messages), its `store_explain` activity, and
by the bridge (errors for requests it could not start). Batching is off: every message is on the caller's
latency path, and a batching producer would hold each one for its publish delay (measured: BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
from contextlib import nullcontext

import structlog
from prometheus_client import Histogram
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Producer
from temporalio.exceptions import ApplicationError

from contracts.delivery import DELIVERY_PROPERTY
from contracts.explain_delivery import StoredEntity
from contracts.explain_documents import ExplainDocument
from contracts.redaction import shown_url
from contracts.topics import explainability_topic, librarian_topics
from contracts.wire import AgentResponse
from contracts.wire_codec import encode_explain_store, encode_response
from service.connections import PULSAR_ERRORS
from service.librarian_writer import LibrarianWriter
from service.trustgraph_metrics import PRODUCED

log = structlog.get_logger(__name__)

# When the message that ends a dialog is sent again (seconds after the first copy): soon, for a consumer that
# was reconnecting; and after the broker's liveness check would have replaced a dead connection.
END_REPEATS_S = (1.0, 10.0)


class ResponsePublisher:
    def __init__(
        self,
        client: AsyncPulsarClient,
        pulsar_url: str,
        seconds: Histogram | None = None,
        processor: str = "",
        librarian: bool = True,
    ) -> None:
        self.client = client
        # Step results' and answers' documents for TrustGraph's librarian (service/librarian_writer.py):
        # the `trustgraph_librarian` setting.
        self.librarian = LibrarianWriter(client) if librarian else None
        self.pulsar_url = pulsar_url
        self._seconds = seconds  # time per message published, when the process exposes it
        self._processor = processor  # counted in tg_producer_messages_total under this processor id, when given
        self._producers: dict[str, Producer] = {}
        self._lock = asyncio.Lock()
        self._repeats: set[asyncio.Task[None]] = set()  # end-of-dialog messages waiting to be sent again

    async def _producer(self, topic: str) -> Producer:
        producer = self._producers.get(topic)
        if producer is None:
            async with self._lock:
                producer = self._producers.get(topic)
                if producer is None:
                    producer = await self.client.create_producer(
                        topic, batching_enabled=False, send_timeout_millis=10000
                    )
                    self._producers[topic] = producer
        return producer

    async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
        """Sends before it first waits (once the topic has its producer; before that, calls wait for it in turn),
        so publishes started one after another, not waited for, go out in that order."""
        with self._seconds.time() if self._seconds is not None else nullcontext():
            await self._publish(topic, request_id, response)

    async def publish_request(self, topic: str, request_id: str, payload: bytes) -> None:
        """An AgentRequest under the caller's `id`: a sub-goal's completion for TrustGraph's supervisor."""
        await self._send(topic, payload, {"id": request_id})

    def stores_explain(self, response_topic: str) -> bool:
        """Whether the flow answering on `response_topic` has a triples store (TrustGraph's naming)."""
        return bool(explainability_topic(response_topic))

    def documents_explain(self, response_topic: str) -> bool:
        """Whether explain documents are written for it: the `trustgraph_librarian` setting, and a workspace."""
        return self.librarian is not None and librarian_topics(response_topic) is not None

    async def store_explain(self, response_topic: str, collection: str, entities: list[StoredEntity]) -> None:
        """Entities written where TrustGraph's agent writes its own: their documents to the workspace's librarian
        first, all at once, and then their triples to the flow's triples store (contracts/topics.explainability_topic),
        as TrustGraph `Triples` of the request's collection, one after another (the store must take a plan before its
        steps). As TrustGraph's agent, each links its document (`tg:document`) only when the librarian confirmed it
        stored it; one it refused or did not answer for is logged (service/librarian_writer.py) and left unlinked:
        it never fails the rest."""
        topic = explainability_topic(response_topic)
        if not topic:
            return
        confirmed = await self._documents(librarian_topics(response_topic), entities)
        for e in entities:
            triples = e.linked(e.explain_id in confirmed)
            response = AgentResponse(message_type="explain", explain_id=e.explain_id, explain_triples=triples)
            await self._send(topic, encode_explain_store(response, collection), {})

    async def _documents(self, librarian: tuple[str, str] | None, entities: list[StoredEntity]) -> set[str]:
        """The entities whose documents the librarian confirmed it stored."""
        documents = {e.explain_id: e.document for e in entities if e.document is not None}
        if self.librarian is None or librarian is None or not documents:
            return set()
        saved = await asyncio.gather(*(self._document(librarian, d) for d in documents.values()))
        return {explain_id for explain_id, ok in zip(documents, saved, strict=True) if ok}

    async def _document(self, librarian: tuple[str, str], document: ExplainDocument) -> bool:
        assert self.librarian is not None
        try:
            return await self.librarian.save(librarian, document)
        except Exception as exc:  # a side effect: whatever goes wrong here, the triples are still stored
            log.warning("librarian_document_failed", document=document.id, error=repr(exc))
            return False

    async def _publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
        properties = {"id": request_id}
        # One per message, the same when it is sent again (contracts/delivery.py); a message queued before it
        # existed (a run in flight) has a message_id per message, which serves the same.
        delivery = response.delivery_id or response.message_id
        if delivery:
            properties[DELIVERY_PROPERTY] = delivery
        payload = encode_response(response)
        await self._send(topic, payload, properties)
        if response.end_of_dialog:
            self._repeat_later(topic, payload, properties)

    def _repeat_later(self, topic: str, payload: bytes, properties: dict[str, str]) -> None:
        """The message that ends a dialog, sent again with the same bytes, message_id and delivery id after each
        of END_REPEATS_S. The response topic is non-persistent: a caller whose consumer was reconnecting at that
        instant never gets the first copy, and TrustGraph's clients cannot look the run up in Temporal as this
        project's do. A caller that has it already drops the repeat (by delivery id, or having stopped listening
        for that request id). Best effort: not sent if the worker stops first."""
        task = asyncio.create_task(self._repeat(topic, payload, properties))
        self._repeats.add(task)
        task.add_done_callback(self._repeats.discard)

    async def _repeat(self, topic: str, payload: bytes, properties: dict[str, str]) -> None:
        waited = 0.0
        for at in END_REPEATS_S:
            await asyncio.sleep(at - waited)
            waited = at
            try:
                await self._send(topic, payload, properties)
            except ApplicationError as exc:  # best effort: the first copy went out (a closing client, a broker away)
                log.debug("end_of_dialog_repeat_failed", request_id=properties.get("id"), error=exc.message)
                return

    async def _send(self, topic: str, payload: bytes, properties: dict[str, str]) -> None:
        try:
            producer = await self._producer(topic)
            await producer.send(payload, properties=properties)
            if self._processor:
                PRODUCED.labels(processor=self._processor, producer=topic).inc()
        except PULSAR_ERRORS as exc:
            self._producers.pop(topic, None)
            raise ApplicationError(
                f"Pulsar at {shown_url(self.pulsar_url)} could not take the response on {topic}: {exc}",
                type="PulsarUnavailable",
            ) from exc

    async def close(self) -> None:
        for task in list(self._repeats):
            task.cancel()
        await asyncio.gather(*self._repeats, return_exceptions=True)
        if self.librarian is not None:
            await self.librarian.close()
        for producer in self._producers.values():
            try:
                await producer.close()
            except PULSAR_ERRORS:
                pass
        self._producers.clear()
