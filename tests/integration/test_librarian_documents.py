"""Writing a run's step results and answer to TrustGraph's librarian is a side effect that never costs the run
anything: with no librarian in the workspace, or one that refuses every document, the caller still gets every
message, in order (the `publish` activity), and the explain triples still reach the flow's triples store (the
`store_explain` activity); a refusal is logged. With `trustgraph_librarian` off nothing is written and nothing
links to a document. (A librarian that stores them: tests/contract/test_trustgraph_gateway.py.)"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pulsar
import pytest
from structlog.testing import capture_logs

from activities.publish import PublishActivities
from contracts.explain import Confidence, Evidence, Explained, StepEntity, StepTrace, Uris
from contracts.explain_delivery import OutboxBatch, StoreBatch
from contracts.explain_documents import TG_DOCUMENT
from contracts.topics import agent_response_topic, explainability_topic, librarian_topics
from contracts.wire import AgentResponse
from contracts.wire_codec import decode_response
from service.connections import pulsar_client
from service.response_publisher import ResponsePublisher


def run_batch(topic: str, session: str) -> OutboxBatch:
    """A batch as a run's outbox sends it: an observation, a step's explain message (its entity alongside), the
    answer."""
    uris = Uris(session, ("s1",))
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
    explained = Explained(uris=uris, entity=StepEntity(step=step))
    responses = [
        AgentResponse(
            message_type="observation", content="Confidence 0.90 meets the threshold 0.80", delivery_id="r#1"
        ),
        AgentResponse(
            message_type="explain",
            explain_id=explained.explain_id,
            explain_graph="urn:graph:retrieval",
            delivery_id="r#2",
        ),
        AgentResponse(message_type="answer", content="Acme.", end_of_dialog=True, delivery_id="r#3"),
    ]
    return OutboxBatch(topic=topic, request_id="r1", responses=responses, explained={"r#2": explained})


async def received(consumer: Any, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        message = await asyncio.wait_for(consumer.receive(), 20)
        await consumer.acknowledge(message)
        out.append(message.data())
    return out


@pytest.mark.parametrize("librarian", ["absent", "refusing", "off"])
async def test_the_caller_gets_every_message_whatever_the_librarian_does(pulsar_url: str, librarian: str) -> None:
    workspace = f"lib-{uuid.uuid4().hex[:8]}"
    topic = agent_response_topic(workspace, "default")
    request_topic, response_topic = librarian_topics(topic)  # type: ignore[misc]
    client = pulsar_client(pulsar_url)
    publisher = ResponsePublisher(client, pulsar_url, librarian=librarian != "off")
    try:
        caller = await client.subscribe(topic, "caller")
        store = await client.subscribe(
            explainability_topic(topic), "store", initial_position=pulsar.InitialPosition.Earliest
        )
        asked: list[bytes] = []
        if librarian != "absent":  # one that answers every request with the error TrustGraph's sends
            requests = await client.subscribe(request_topic, "librarian")
            answers = await client.create_producer(response_topic)

            async def refuse() -> None:
                while True:
                    message = await requests.receive()
                    await requests.acknowledge(message)
                    asked.append(message.data())
                    await answers.send(
                        json.dumps({"error": {"type": "unexpected-error", "message": "object store down"}}).encode(),
                        properties={"id": message.properties()["id"]},
                    )

            refusing = asyncio.create_task(refuse())
        with capture_logs() as logs:
            activities, batch = PublishActivities(publisher), run_batch(topic, f"agent-{workspace}")
            assert (await activities.publish(batch)).store
            await activities.store_explain(
                StoreBatch(response_topic=topic, collection="default", entities=list(batch.explained.values()))
            )
            got = [decode_response(m) for m in await received(caller, 3)]
            assert [m.message_type for m in got] == ["observation", "explain", "answer"]
            linked = [t.o.iri for t in got[1].explain_triples if t.p.iri == TG_DOCUMENT]
            stored = json.loads((await received(store, 1))[0])
            stored_links = [t["o"]["iri"] for t in stored["triples"] if t["p"]["iri"] == TG_DOCUMENT]
            if librarian == "off":
                assert linked == stored_links == []
            else:
                assert linked == stored_links == [f"{got[1].explain_id}/doc"]
            if librarian == "refusing":
                for _ in range(200):
                    if any(e["event"] == "librarian_refused_document" for e in logs):
                        break
                    await asyncio.sleep(0.05)
                assert [e["document"] for e in logs if e["event"] == "librarian_refused_document"] == linked
        if librarian == "off":
            await asyncio.sleep(0.5)  # a request would have arrived by now
            assert asked == []
        if librarian != "absent":
            refusing.cancel()
    finally:
        await publisher.close()
        await client.close()
