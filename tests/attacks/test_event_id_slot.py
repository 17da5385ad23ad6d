"""A Last-Event-ID no stream could have sent (thousands of digits, which int() refuses) used to fail after
the caller's stream slot was taken, and the slot stayed taken: a few such reconnects and the caller got 429 on
every stream until a restart. The id is read before a slot is taken, and one it cannot be is ignored (the
stream resumes from `after`)."""

from __future__ import annotations

import asyncio
from typing import Any

from chat.stream_slots import StreamSlots
from embedded import demo_graph
from tests.chat_server import chat_server, sse_events
from tests.integration.test_chat_api import PAY
from tests.integration.test_conversations import ConversationalModel
from tests.scripted_llm import ScriptedLLM

HUGE_ID = "9" * 5000


async def all_given_back(slots: StreamSlots) -> None:
    while slots.open:  # noqa: ASYNC110 - the server notices each close
        await asyncio.sleep(0.05)


async def test_reconnects_with_an_impossible_event_id_leave_no_slot_taken(make_stack, demo_copy) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        slots = StreamSlots(total=4, per_caller=2)
        async with chat_server(stack, streams_open=slots) as server, server.client() as http:
            events: list[dict[str, Any]] = []
            async with http.stream("POST", "/chat/stream", json={"query": PAY}) as response:
                async for _, event in sse_events(response):
                    events.append(event)
                    if event["type"] == "override_request":
                        break
            run = f"/runs/{events[0]['workflow_id']}/events"
            statuses, resumed = [], []
            for _ in range(8):  # four times the caller's slots
                async with http.stream("GET", run, headers={"Last-Event-ID": HUGE_ID}) as r:
                    statuses.append(r.status_code)
                    async for _, event in sse_events(r):  # resumed from `after` (0): the run's events again
                        resumed.append(event["type"])
                        break
            gone = asyncio.create_task(all_given_back(slots))
            await asyncio.wait({gone}, timeout=10)  # leaked slots never come back: bounded, not a hang
            left_open = slots.open
            async with http.stream("GET", run, headers={"Last-Event-ID": "1"}) as r:
                after = r.status_code
            await http.post(
                f"/runs/{events[0]['workflow_id']}/override", json={"step_id": "approve", "decision": "abort"}
            )
    assert left_open == 0
    assert statuses == [200] * 8 and len(resumed) == 8
    assert after == 200
