"""The readers of a streamed answer, whose chunks share one message_id (as TrustGraph's do): the chat shows the
whole answer, and the chat and the CLI still drop a message delivered twice (a retried publish), which they
know by its `delivery_id` property, not by its message_id."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from chat.runs import RunStreams
from cli.ask import ask
from contracts.wire import AgentRequest
from service.connections import pulsar_client
from tests.chat_server import chat_server, sse_events
from tests.contract.test_trustgraph_contract import ANSWER, answers
from tests.scripted_llm import ScriptedLLM

CHUNKS = ["The first sentence of the answer. ", "The second one. ", "The third and last."]


async def test_the_chat_shows_the_whole_streamed_answer(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        events: list[dict[str, Any]] = []

        async def chat() -> None:
            async with (
                chat_server(stack) as server,
                server.client() as http,
                http.stream(
                    "POST", "/chat/stream", json={"query": "Which supplier has the most purchase orders?"}
                ) as response,
            ):
                assert response.status_code == 200
                async for _, event in sse_events(response):
                    events.append(event)
                    if event["type"] == "done":
                        return

        await asyncio.wait_for(chat(), 120)  # a chat that lost the closing message would never say done
        result = await stack.client.get_workflow_handle(events[0]["workflow_id"]).result()
    contents = [e["content"] for e in events if e["type"] == "content"]
    assert len(contents) >= 2  # streamed in chunks, every one shown
    assert "".join(contents) == result["answer"] and result["answer"].startswith(ANSWER)


def streamed(request_id: str) -> list[tuple[dict[str, Any], str]]:
    """A streamed answer as this service publishes it: chunks and the closing message share the answer's
    message_id, each message has a delivery id of its own; the second chunk is delivered twice."""
    answer_id = "urn:trustgraph:agent:s/synthesis"
    messages = [({"message_type": "thought", "content": "Thinking.", "message_id": f"{request_id}#1"}, "1")]
    messages += [
        (
            {
                "message_type": "answer",
                "content": c,
                "end_of_message": False,
                "end_of_dialog": False,
                "message_id": answer_id,
            },
            str(n),
        )
        for n, c in enumerate(CHUNKS, start=2)
    ]
    messages.insert(3, messages[2])  # a publish retried after a timeout: the same chunk again
    messages.append(
        (
            {
                "message_type": "answer",
                "content": "",
                "end_of_message": True,
                "end_of_dialog": True,
                "message_id": answer_id,
                "in_token": 40,
                "out_token": 20,
                "model": "scripted",
            },
            "9",
        )
    )
    return messages


async def publish(producer, request_id: str) -> None:  # type: ignore[no-untyped-def]
    for body, delivery in streamed(request_id):
        await producer.send(json.dumps(body).encode(), properties={"id": request_id, "delivery_id": delivery})


async def test_the_chat_reader_keeps_every_chunk_and_drops_a_repeat(pulsar_url: str, unique: str) -> None:
    client = pulsar_client(pulsar_url)
    requests, responses = f"persistent://public/default/req-{unique}", f"persistent://public/default/resp-{unique}"
    streams = RunStreams(client, requests, responses)
    await streams.start()
    producer = await client.create_producer(responses, batching_enabled=False)
    try:
        stream = await streams.ask(AgentRequest(question="anything"))
        await publish(producer, stream.request_id)
        for _ in range(20):
            await stream.wait(after=len(stream.messages), timeout_s=1)
            if stream.finished:
                break
        assert [m.content for m in stream.messages] == ["Thinking.", *CHUNKS, ""] and stream.finished
    finally:
        await producer.close()
        await streams.stop()
        await client.close()


async def test_the_cli_keeps_every_chunk_and_drops_a_repeat(pulsar_url: str, unique: str) -> None:
    requests, responses = f"persistent://public/default/req-{unique}", f"persistent://public/default/resp-{unique}"
    client = pulsar_client(pulsar_url)
    agent = await client.subscribe(requests, f"agent-{uuid.uuid4().hex}")  # stands in for the agent

    async def answer() -> None:
        request = await agent.receive()
        await agent.acknowledge(request)
        producer = await client.create_producer(responses, batching_enabled=False)
        await publish(producer, request.properties()["id"])
        await producer.close()

    answering = asyncio.create_task(answer())
    try:
        received = [
            r
            async for r in ask(
                pulsar_url,
                AgentRequest(question="anything", streaming=True),
                request_topic=requests,
                response_topic=responses,
                timeout_s=30,
            )
        ]
        await answering
    finally:
        await client.close()
    assert [r.content for r in received] == ["Thinking.", *CHUNKS, ""]
    assert received[-1].end_of_dialog and received[-1].in_token == 40
