"""Documents written to TrustGraph's librarian, as its agent writes the content of its step results and answers
(trustgraph-base's AsyncLibrarianClient.save_document: an `add-document` request, `text/plain`, document type
`answer`, on the workspace's librarian queue). Written by the run's `store_explain` activity, off the caller's
path, beside the explain triples it stores. As TrustGraph's agent, which links a document from its trace only
once `save_document` returned, a save says whether the librarian confirmed it stored the document (or already had
it): only then does the trace link it (`tg:document`). A side effect that must never fail the run: a librarian
that refuses is logged; one that does not answer in time (absent: its queue is non-persistent, so the request is
dropped) is logged and, for a while, not waited for again, so a workspace without a librarian costs a run no
more than the first wait. docs/trustgraph-contract.md, "Explainability"."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
import uuid

import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Consumer, Producer

from contracts.explain_documents import ExplainDocument
from service.connections import PULSAR_ERRORS

log = structlog.get_logger(__name__)

SEND_TIMEOUT_S = 2.0  # a broker that cannot take the request within this long: the document is skipped
CONFIRM_TIMEOUT_S = 2.0  # a librarian that has not answered within this long: the document is not linked
# After a librarian did not answer, its workspace's documents are sent without waiting (and not linked) for this
# long: a deployment without a librarian pays one wait, not one per run.
SILENT_RETRY_S = 60.0
ALREADY_STORED = "already exists"  # a store retried after its documents were stored: the librarian has it
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
    def __init__(
        self,
        client: AsyncPulsarClient,
        send_timeout_s: float = SEND_TIMEOUT_S,
        confirm_timeout_s: float = CONFIRM_TIMEOUT_S,
    ) -> None:
        self.client = client
        self.send_timeout_s = send_timeout_s
        self.confirm_timeout_s = confirm_timeout_s
        self._producers: dict[str, Producer] = {}
        self._listeners: dict[str, asyncio.Task[None]] = {}
        self._listening: dict[str, asyncio.Event] = {}
        self._pending: dict[str, tuple[str, asyncio.Future[bool]]] = {}  # request id -> (document id, its answer)
        self._silent_until: dict[str, float] = {}  # response topic -> when its librarian is waited for again

    async def save(self, topics: tuple[str, str], document: ExplainDocument) -> bool:
        """Send the document to the librarian and wait for its answer: True once it stored the document (or had
        it already); False (logged) when the broker did not take the request, the librarian refused it or did not
        answer in time."""
        request, response = topics
        listening = self._listen(response)
        request_id = str(uuid.uuid4())
        if not listening.is_set():  # once per workspace, so that the answer to this request is not missed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(listening.wait(), self.send_timeout_s)
        answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (document.id, answered)  # before sending: the answer may come back at once
        try:
            try:
                await asyncio.wait_for(self._send(request, request_id, document), self.send_timeout_s)
            except _SEND_ERRORS as exc:
                self._producers.pop(request, None)
                log.warning("librarian_document_not_sent", document=document.id, topic=request, error=repr(exc))
                return False
            if time.monotonic() < self._silent_until.get(response, 0.0):
                return False  # sent, but not waited for: a librarian that lately did not answer
            try:
                return await asyncio.wait_for(asyncio.shield(answered), self.confirm_timeout_s)
            except TimeoutError:
                self._silent_until[response] = time.monotonic() + SILENT_RETRY_S
                log.warning(
                    "librarian_did_not_answer", document=document.id, topic=request, waited_s=self.confirm_timeout_s
                )
                return False
        finally:
            self._pending.pop(request_id, None)

    async def _send(self, topic: str, request_id: str, document: ExplainDocument) -> None:
        producer = self._producers.get(topic)
        if producer is None:
            producer = await self.client.create_producer(topic, batching_enabled=False)
            self._producers[topic] = producer
        await producer.send(json.dumps(add_document_request(document)).encode(), properties={"id": request_id})

    def _listen(self, topic: str) -> asyncio.Event:
        """The librarian's answers, read in the background; the event is set once the listener has subscribed (or
        could not)."""
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
                pending = self._pending.get(message.properties().get("id", ""))
                if pending is None:
                    continue  # another client's request, or one no longer waited for
                self._silent_until.pop(topic, None)  # it answers again
                document, answered = pending
                error = (json.loads(message.data()) or {}).get("error") or {}
                stored = not error or ALREADY_STORED in str(error.get("message", ""))
                if not stored:
                    log.warning("librarian_refused_document", document=document, error=error)
                if not answered.done():
                    answered.set_result(stored)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a listener that stops leaves the saves waiting for it unconfirmed
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
