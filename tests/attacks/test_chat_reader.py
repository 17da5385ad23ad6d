"""The chat's response reader, on the real broker: any message on the response topic that is not a response
(valid JSON that is no object, nesting a parser cannot follow, bytes that are not JSON) is logged and skipped,
and the streams it was addressed to still get their run's next messages."""

from __future__ import annotations

import json

from chat.runs import RunStreams
from contracts.wire import AgentRequest
from service.connections import pulsar_client

BAD = [b"[]", b"null", b"[" * 50_000 + b"]" * 50_000, b"\xff\xfe", b'{"message_type": "answer", "content": [1]}']


async def test_bad_messages_skip_and_the_stream_still_gets_its_answer(pulsar_url: str, unique: str) -> None:
    client = pulsar_client(pulsar_url)
    requests, responses = f"persistent://public/default/req-{unique}", f"persistent://public/default/resp-{unique}"
    streams = RunStreams(client, requests, responses)
    await streams.start()
    producer = await client.create_producer(responses, batching_enabled=False)
    try:
        stream = await streams.ask(AgentRequest(question="anything"))
        for payload in BAD:
            await producer.send(payload, properties={"id": stream.request_id})
        answer = {"message_type": "answer", "content": "The answer.", "end_of_dialog": True, "message_id": "m1"}
        await producer.send(json.dumps(answer).encode(), properties={"id": stream.request_id})
        for _ in range(20):
            await stream.wait(after=0, timeout_s=1)
            if stream.finished:
                break
        assert [m.content for m in stream.messages] == ["The answer."] and stream.finished
    finally:
        await producer.close()
        await streams.stop()
        await client.close()
