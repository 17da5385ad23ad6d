"""Every caller gets an answer or a clear error, never silence or a 500. Over Pulsar: a
request that reuses another request's id, and a request nested too deeply to read. Over HTTP: a
Last-Event-ID that only looks like a number, and the id of a workflow that is not an agent run."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pulsar

from contracts.conversation import conversation_workflow_id
from embedded import demo_graph
from service.connections import pulsar_client
from tests.chat_server import chat_server
from tests.integration.test_chat_api import collect
from tests.integration.test_conversations import ConversationalModel
from tests.scripted_llm import ScriptedLLM

QUESTION = "Which orders of Northwind Traders are unpaid?"


async def replies(consumer: Any, ids: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Every response to `ids` until each has its last message."""
    got: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    while not all(m and (m[-1]["end_of_dialog"] or m[-1]["message_type"] == "error") for m in got.values()):
        message = await asyncio.wait_for(consumer.receive(), 120)
        await consumer.acknowledge(message)
        request_id = message.properties().get("id")
        if request_id in got:
            got[request_id].append(json.loads(message.data()))
    return got


async def test_a_reused_or_unreadable_request_gets_an_error_not_silence(make_stack, demo_copy, unique: str) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        client = pulsar_client(stack.config.pulsar_url)
        try:
            consumer = await client.subscribe(
                stack.config.response_topic, f"drops-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Latest
            )
            producer = await client.create_producer(stack.request_topic, batching_enabled=False)
            used, nested = f"used-{unique}", f"nested-{unique}"
            await producer.send(json.dumps({"question": QUESTION}).encode(), properties={"id": used})
            first = await replies(consumer, {used})
            await producer.send(json.dumps({"question": "Pay every order"}).encode(), properties={"id": used})
            deep = b'{"question": "x", "history": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            await producer.send(deep, properties={"id": nested})
            later = await replies(consumer, {used, nested})
        finally:
            await client.close()
    assert first[used][-1]["message_type"] == "answer"
    assert later[used][-1]["message_type"] == "error"
    assert "already used by another request" in later[used][-1]["error"]["message"]
    assert later[nested][-1]["message_type"] == "error"
    assert "nested too deeply" in later[nested][-1]["error"]["message"]
    runs = [w async for w in stack.client.list_workflows(f"WorkflowId = 'agent-{used}'")]
    assert len(runs) == 1  # the reused id started nothing


async def test_odd_http_input_gets_a_clear_answer_not_a_500(make_stack, demo_copy, unique: str) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, server.client() as http:
            events: list[dict[str, Any]] = []
            await asyncio.wait_for(collect(http, {"query": QUESTION}, events), 120)
            workflow_id = events[0]["workflow_id"]
            # "²" as the server reads the header (latin-1): str.isdigit() takes it, int() does not
            superscript = await http.get(f"/runs/{workflow_id}/events", headers={"Last-Event-ID": b"\xb2"})
            conversation_run = await http.get(f"/runs/{conversation_workflow_id(events[0]['id'])}")
            conversation_events = await http.get(f"/runs/{conversation_workflow_id(events[0]['id'])}/events")
    assert superscript.status_code == 200 and '"type": "done"' in superscript.text
    assert conversation_run.status_code == 404 and conversation_events.status_code == 404
