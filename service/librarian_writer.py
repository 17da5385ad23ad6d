"""Documents written to TrustGraph's librarian, as its agent writes the content of its step results and answers
(trustgraph-base's AsyncLibrarianClient.save_document: an `add-document` request, `text/plain`, document type
`answer`, on the workspace's librarian queue). Written by the run's `store_explain` activity, off the caller's
path, beside the explain triples it stores; a side effect that must never fail the run: the request is sent
without waiting for the librarian's answer, which a listener reads in the background only to log a refusal. A
librarian that is absent (its queue is non-persistent: the request is dropped) or refuses leaves a `tg:document`
link whose content the CLIs cannot fetch, logged here; nothing else changes. docs/trustgraph-contract.md,
"Explainability"."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import uuid
from collections import OrderedDict

import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Consumer, Producer

from contracts.explain_documents import ExplainDocument
from service.connections import PULSAR_ERRORS

log = structlog.get_logger(__name__)

SEND_TIMEOUT_S = 2.0  # a broker that cannot take the request within this long: the document is skipped
MAX_PENDING = 1000  # requests remembered for their answer (an absent librarian never answers)
ALREADY_STORED = "already exists"  # a publish retried after its documents were stored: nothing lost
# The broker did not take the request in time, or refused it: the document is skipped.
_SEND_ERRORS: tuple[type[Exception], ...] = (TimeoutError, *PULSAR_ERRORS)


def add_document_request(document: ExplainDocument) -> dict[str, object]:
    """TrustGraph's LibrarianRequest as its Pulsar JSON carries it (trustgraph-base's dataclass_to_dict)."""
    return {
        "operation": "add-document",
        "document_id": document.id,
        "document_metadata": {
            "id": document.id,
            "time": 0,
            "kind": "text/plain",
            "title": document.title,
            "comments": "",
            "metadata": [],
            "tags": [],
            "parent_id": "",
            "document_type": "answer",
        },
        "content": base64.b64encode(document.content.encode("utf-8")).decode("ascii"),
    }


class LibrarianWriter:
    def __init__(self, client: AsyncPulsarClient, send_timeout_s: float = SEND_TIMEOUT_S) -> None:
        self.client = client
        self.send_timeout_s = send_timeout_s
        self._producers: dict[str, Producer] = {}
        self._listeners: dict[str, asyncio.Task[None]] = {}
        self._listening: dict[str, asyncio.Event] = {}
        self._pending: OrderedDict[str, str] = OrderedDict()  # request id -> document id

    async def save(self, topics: tuple[str, str], document: ExplainDocument) -> bool:
        """Send the document to the librarian; False (logged) if the broker did not take it in time."""
        request, response = topics
        listening = self._listen(response)
        request_id = str(uuid.uuid4())
        if not listening.is_set():  # once per workspace, so that the answer to this request is not missed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(listening.wait(), self.send_timeout_s)
        self._pending[request_id] = document.id  # before sending: the answer may come back at once
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        try:
            await asyncio.wait_for(self._send(request, request_id, document), self.send_timeout_s)
        except _SEND_ERRORS as exc:
            self._pending.pop(request_id, None)
            self._producers.pop(request, None)
            log.warning("librarian_document_not_sent", document=document.id, topic=request, error=repr(exc))
            return False
        return True

    async def _send(self, topic: str, request_id: str, document: ExplainDocument) -> None:
        producer = self._producers.get(topic)
        if producer is None:
            producer = await self.client.create_producer(topic, batching_enabled=False)
            self._producers[topic] = producer
        await producer.send(json.dumps(add_document_request(document)).encode(), properties={"id": request_id})

    def _listen(self, topic: str) -> asyncio.Event:
        """The librarian's answers, read in the background: only a refusal is worth a log line. The event is
        set once the listener has subscribed (or could not)."""
        if topic not in self._listeners:
            self._listening[topic] = asyncio.Event()
            self._listeners[topic] = asyncio.create_task(self._answers(topic, self._listening[topic]))
        return self._listening[topic]

    async def _answers(self, topic: str, listening: asyncio.Event) -> None:
        consumer: Consumer | None = None
        try:
            try:
                consumer = await self.client.subscribe(topic, f"tgca-librarian-{uuid.uuid4().hex[:12]}")
            finally:
                listening.set()
            while True:
                message = await consumer.receive()
                await consumer.acknowledge(message)
                document = self._pending.pop(message.properties().get("id", ""), None)
                if document is None:
                    continue  # another client's request
                error = (json.loads(message.data()) or {}).get("error") or {}
                if error and ALREADY_STORED not in str(error.get("message", "")):
                    log.warning("librarian_refused_document", document=document, error=error)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a listener that stops only stops the logging of refusals
            closing = "AlreadyClosed" in repr(exc)  # the process is closing its Pulsar client
            (log.debug if closing else log.warning)("librarian_listener_stopped", topic=topic, error=repr(exc))
        finally:
            if consumer is not None:
                with contextlib.suppress(*PULSAR_ERRORS):
                    await consumer.close()

    async def close(self) -> None:
        for task in self._listeners.values():
            task.cancel()
        await asyncio.gather(*self._listeners.values(), return_exceptions=True)
        self._listeners.clear()
        self._listening.clear()
        for producer in self._producers.values():
            with contextlib.suppress(*PULSAR_ERRORS):
                await producer.close()
        self._producers.clear()
