"""A caller whose final answer does not come in time is told how far the run got and where to find it.

A run's answer can be lost between the worker and the caller (docs/testing.md, "A known flake") or the run
can still be going: either way the caller's only lead is the run's workflow id, so the timeout names it."""

from __future__ import annotations

import asyncio
import uuid

import pulsar
import pytest

from cli.ask import AskTimeout, ask
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import encode_response
from service.connections import pulsar_client


async def serve_one_request(
    pulsar_url: str,
    request_topic: str,
    response_topic: str,
    subscribed: asyncio.Event,
    replies: list[tuple[float, AgentResponse]],
) -> None:
    """A service that takes one request and sends `replies` to it, each after its pause (its message_id as its
    delivery id), then says nothing more."""
    client = pulsar_client(pulsar_url)
    try:
        consumer = await client.subscribe(
            request_topic, f"svc-{uuid.uuid4().hex}", consumer_type=pulsar.ConsumerType.Exclusive
        )
        subscribed.set()
        request = await consumer.receive()
        producer = await client.create_producer(response_topic, batching_enabled=False)
        for pause_s, reply in replies:
            await asyncio.sleep(pause_s)
            await producer.send(
                encode_response(reply), properties={"id": request.properties()["id"], "delivery_id": reply.message_id}
            )
        await asyncio.sleep(30)
    finally:
        await client.close()


async def answer_with_one_thought(
    pulsar_url: str, request_topic: str, response_topic: str, subscribed: asyncio.Event
) -> None:
    """A service that takes the request, says it is planning, and never answers."""
    thought = AgentResponse(message_type="thought", content="Planning how to answer", message_id="t1")
    await serve_one_request(pulsar_url, request_topic, response_topic, subscribed, [(0.0, thought)])


async def test_a_timeout_says_how_far_the_run_got_and_names_its_workflow(pulsar_url: str) -> None:
    unique = uuid.uuid4().hex
    request_topic = f"non-persistent://tg/request/ask-timeout-{unique}"
    response_topic = f"non-persistent://tg/response/ask-timeout-{unique}"
    subscribed = asyncio.Event()
    service = asyncio.create_task(answer_with_one_thought(pulsar_url, request_topic, response_topic, subscribed))
    try:
        await asyncio.wait_for(subscribed.wait(), 30)
        request_id = f"req-{unique}"
        got: list[AgentResponse] = []
        with pytest.raises(AskTimeout) as raised:
            async for message in ask(
                pulsar_url,
                AgentRequest(question="Which supplier is largest?"),
                request_topic=request_topic,
                response_topic=response_topic,
                timeout_s=4,
                request_id=request_id,
            ):
                got.append(message)
    finally:
        service.cancel()
        await asyncio.gather(service, return_exceptions=True)
    assert [m.content for m in got] == ["Planning how to answer"]
    said = str(raised.value)
    assert said.startswith(
        f"no final answer within 4s (request id {request_id}; 1 message(s) received, the last a thought)"
    ), said
    assert said.endswith(f"temporal workflow show --workflow-id {workflow_id_for(request_id)}"), said


async def test_a_timeout_with_nothing_received_says_so(pulsar_url: str) -> None:
    unique = uuid.uuid4().hex
    with pytest.raises(AskTimeout) as raised:
        async for _ in ask(
            pulsar_url,
            AgentRequest(question="Anyone there?"),
            request_topic=f"non-persistent://tg/request/nobody-{unique}",
            response_topic=f"non-persistent://tg/response/nobody-{unique}",
            timeout_s=2,
            request_id=f"req-{unique}",
        ):
            pass
    assert "(request id req-" in str(raised.value) and "; no message received)" in str(raised.value)


async def answer_slowly(
    pulsar_url: str, request_topic: str, response_topic: str, subscribed: asyncio.Event, pause_s: float
) -> None:
    """A service that says three things with a pause before each, the last ending the dialog."""
    said = [
        (
            pause_s,
            AgentResponse(
                message_type=kind,
                content=f"{kind} {n}",
                end_of_message=True,
                end_of_dialog=kind == "answer",
                message_id=f"run#{n}",
            ),
        )
        for n, kind in enumerate(["thought", "observation", "answer"], 1)
    ]
    await serve_one_request(pulsar_url, request_topic, response_topic, subscribed, said)


async def test_messages_after_silences_all_arrive(pulsar_url: str) -> None:
    """ask waits through silences longer than the one after which it would look the run up: a message that
    comes after a silence is the caller's, not dropped with a receive given up on."""
    unique = uuid.uuid4().hex
    request_topic = f"non-persistent://tg/request/ask-silent-{unique}"
    response_topic = f"non-persistent://tg/response/ask-silent-{unique}"
    subscribed = asyncio.Event()
    service = asyncio.create_task(answer_slowly(pulsar_url, request_topic, response_topic, subscribed, 1.0))
    try:
        await asyncio.wait_for(subscribed.wait(), 30)
        got = [
            m.content
            async for m in ask(
                pulsar_url,
                AgentRequest(question="Slowly, please"),
                request_topic=request_topic,
                response_topic=response_topic,
                timeout_s=20,
                silence_s=0.3,
            )
        ]
    finally:
        service.cancel()
        await asyncio.gather(service, return_exceptions=True)
    assert got == ["thought 1", "observation 2", "answer 3"]
