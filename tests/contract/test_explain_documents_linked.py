"""A run's trace links a librarian document (`tg:document`) only once the librarian confirmed it stored it, as
TrustGraph 2.11.1's agent links only what `save_document` returned for (orchestrator/pattern_base.py): written by
the worker's own `publish` and `store_explain` activities and its Pulsar publisher, on the real broker, with a
librarian that answers as TrustGraph's does (librarian/librarian.py: an `add-document` answered with no error, a
second one with "already exists"), one that refuses, and none at all. The caller's explain messages never link a
document (it is written later, off the caller's path); the caller gets every message whatever the librarian does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from typing import Any

import pulsar
import pytest

from activities.publish import PublishActivities
from contracts.explain import Confidence, Evidence, Explained, StepEntity, StepTrace, Uris
from contracts.explain_delivery import OutboxBatch, StoreBatch
from contracts.explain_documents import TG_DOCUMENT
from contracts.topics import agent_response_topic, explainability_topic, librarian_topics
from contracts.wire import AgentResponse
from contracts.wire_codec import decode_response
from service.connections import pulsar_client
from service.librarian_writer import CONFIRM_TIMEOUT_S
from service.response_publisher import ResponsePublisher

REFUSED = {"type": "unexpected-error", "message": "object store down"}  # TrustGraph's librarian's error shape


def step_batch(topic: str, session: str) -> OutboxBatch:
    """A batch as a run's outbox sends it: an observation, a step's explain message (its entity alongside), the
    answer."""
    confidence = Confidence(0.9, "Query returned 2 row(s)", [Evidence("rows", 2)], threshold=0.8)
    step = StepTrace(
        step_id="s1",
        tool="GraphQuery",
        outcome="succeeded",
        usable=True,
        started="",
        ended="",
        attempts=[],
        confidence=confidence,
        output="[]",
        dependencies=[],
    )
    explained = Explained(uris=Uris(session, ("s1",)), entity=StepEntity(step=step))
    responses = [
        AgentResponse(message_type="observation", content="Confidence 0.90 meets the threshold", delivery_id="r#1"),
        AgentResponse(message_type="explain", explain_id=explained.explain_id, delivery_id="r#2"),
        AgentResponse(message_type="answer", content="Acme.", end_of_dialog=True, delivery_id="r#3"),
    ]
    return OutboxBatch(topic=topic, request_id="r1", responses=responses, explained={"r#2": explained})


class Librarian:
    """The workspace's librarian on its queues: `stores` answers as TrustGraph's stores a document, else refuses."""

    def __init__(self, client: Any, topics: tuple[str, str], stores: bool) -> None:
        self.client, self.topics, self.stores = client, topics, stores
        self.held: set[str] = set()

    async def __aenter__(self) -> Librarian:
        requests = await self.client.subscribe(self.topics[0], f"librarian-{uuid.uuid4().hex[:6]}")
        answers = await self.client.create_producer(self.topics[1])

        async def serve() -> None:
            while True:
                message = await requests.receive()
                await requests.acknowledge(message)
                document = json.loads(message.data())["document_id"]
                error: dict[str, str] | None = REFUSED
                if self.stores:
                    known = document in self.held
                    error = {"type": "request-error", "message": "Document already exists"} if known else None
                    self.held.add(document)
                await answers.send(json.dumps({"error": error}).encode(), properties={"id": message.properties()["id"]})

        self._serving = asyncio.create_task(serve())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._serving.cancel()


async def received(consumer: Any, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        message = await asyncio.wait_for(consumer.receive(), 20)
        await consumer.acknowledge(message)
        out.append(message.data())
    return out


def links(triples: list[dict[str, Any]]) -> list[str]:
    return [t["o"]["iri"] for t in triples if t["p"]["iri"] == TG_DOCUMENT]


async def stored_once(
    pulsar_url: str, librarian: str, times: int = 1
) -> tuple[list[AgentResponse], list[list[str]], float]:
    """Publish a step's batch and store its entity `times` times (a retried store), with the librarian as said:
    what the caller got, the document links of each stored copy, and how long the last store took."""
    workspace = f"lib-{uuid.uuid4().hex[:8]}"
    topic = agent_response_topic(workspace, "default")
    client = pulsar_client(pulsar_url)
    publisher = ResponsePublisher(client, pulsar_url, librarian=librarian != "off")
    try:
        caller = await client.subscribe(topic, "caller")
        store = await client.subscribe(
            explainability_topic(topic), "store", initial_position=pulsar.InitialPosition.Earliest
        )
        topics = librarian_topics(topic)
        assert topics is not None
        serving = Librarian(client, topics, stores=librarian == "stores")
        activities, batch = PublishActivities(publisher), step_batch(topic, f"agent-{workspace}")
        async with serving if librarian in ("stores", "refuses") else contextlib.nullcontext():
            assert (await activities.publish(batch)).store
            taken = 0.0
            for _ in range(times):
                started = time.monotonic()
                await activities.store_explain(
                    StoreBatch(response_topic=topic, collection="default", entities=list(batch.explained.values()))
                )
                taken = time.monotonic() - started
        got = [decode_response(m) for m in await received(caller, 3)]
        copies = [links(json.loads(m)["triples"]) for m in await received(store, times)]
        return got, copies, taken
    finally:
        await publisher.close()
        await client.close()


@pytest.mark.parametrize("librarian", ["stores", "refuses", "absent", "off"])
async def test_a_document_is_linked_only_once_the_librarian_confirmed_it(pulsar_url: str, librarian: str) -> None:
    got, [stored], _ = await stored_once(pulsar_url, librarian)
    assert [m.message_type for m in got] == ["observation", "explain", "answer"]
    explain = got[1]
    assert [t for t in explain.explain_triples if t.p.iri == TG_DOCUMENT] == []  # the caller's: never a link
    assert stored == ([f"{explain.explain_id}/doc"] if librarian == "stores" else [])


async def test_a_store_retried_after_its_document_was_stored_links_it_again(pulsar_url: str) -> None:
    """The librarian answers the second add-document "already exists": it holds the document, so it is linked."""
    _, copies, _ = await stored_once(pulsar_url, "stores", times=2)
    assert copies[0] == copies[1] and len(copies[0]) == 1


async def test_a_librarian_that_never_answers_is_waited_for_once(pulsar_url: str) -> None:
    """Without a librarian, the first store waits for its answer a bounded time; the next ones do not wait."""
    _, copies, last = await stored_once(pulsar_url, "absent", times=2)
    assert copies == [[], []] and last < CONFIRM_TIMEOUT_S / 2
