"""Pulsar -> bridge -> ConfidenceAgentWorkflow -> Pulsar, with real servers and a scripted LLM."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pulsar
from falkordb.asyncio import FalkorDB

from cli.ask import ask
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest, AgentResponse
from service.connections import pulsar_client
from service.run_recovery import RunLookup
from tests.scripted_llm import ScriptedLLM, is_planning, is_query_form, is_synthesis

TOP_SUPPLIERS = (
    "MATCH (s:Supplier)<-[:ISSUED_TO]-(po:PurchaseOrder) "
    "RETURN s.name AS supplier, count(po) AS orders ORDER BY orders DESC LIMIT 3"
)
PLAN = {
    "steps": [
        {"id": "orders", "function": "GraphQuery", "arguments": {"query": TOP_SUPPLIERS}, "dependencies": []},
        {
            "id": "interpret",
            "function": "TextCompletion",
            "arguments": {"prompt": "Which supplier has the most orders?"},
            "dependencies": ["orders"],
        },
    ]
}
ROW = re.compile(r'\[\["([^"]+)",(\d+)\]')


def reads_the_rows(body: dict[str, Any]) -> tuple[int, str]:
    """Plans with PLAN; text steps and synthesis answer from the rows they were given, as a model would."""
    if is_planning(body):
        return 200, json.dumps(PLAN)
    found = ROW.search(body["messages"][-1]["content"])
    if not found:
        return 200, "I don't know."
    name, count = found.groups()
    if is_synthesis(body):
        return 200, f"{name} has the most purchase orders ({count})."
    return 200, f"{name} leads with {count} orders."


async def collect(stack, question: str, **fields: Any) -> list[AgentResponse]:  # type: ignore[no-untyped-def]
    request = AgentRequest(question=question, **fields)
    return [
        m
        async for m in ask(
            stack.config.pulsar_url,
            request,
            request_topic=stack.request_topic,
            response_topic=stack.config.response_topic,
            timeout_s=60,
            runs=RunLookup(stack.client),
        )
    ]


async def top_supplier(falkordb_url: str) -> tuple[str, int]:
    db = FalkorDB.from_url(falkordb_url)
    rows = (await db.select_graph("procurement").ro_query(TOP_SUPPLIERS)).result_set
    await db.aclose()
    return rows[0][0], rows[0][1]


async def test_question_answered_end_to_end_with_steps_streamed(make_stack, falkordb_url: str) -> None:
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url)
        everything = await collect(stack, "Which supplier has the most purchase orders?")

    # Between them, TrustGraph's explain messages (tests/contract/test_explainability.py reads them).
    explains = [m.explain_id for m in everything if m.message_type == "explain"]
    session = explains[0]
    assert explains == [session, f"{session}/plan", f"{session}/step/0", f"{session}/step/1", f"{session}/synthesis"]
    messages = [m for m in everything if m.message_type != "explain"]
    kinds = [m.message_type for m in messages]
    assert kinds == ["thought", "observation", "thought", "observation", "thought", "observation", "answer"]
    assert "Plan with 2 step(s)" in messages[1].content
    assert "GraphQuery" in messages[2].content
    name, count = await top_supplier(falkordb_url)
    assert name in messages[3].content and "Confidence 0.90 meets" in messages[3].content
    final = messages[-1]
    assert final.end_of_dialog and final.error is None
    assert final.content.startswith(f"{name} has the most purchase orders ({count}).")
    assert re.search(r"Confidence: 0\.\d\d( \(low\))? - ", final.content)  # the shipped calibrator decides which
    assert len({m.message_id for m in everything}) == len(everything)
    # The planner saw the live graph schema, not a hard-coded one.
    planner_prompt = llm.requests[0]["messages"][0]["content"]
    assert "(:PurchaseOrder)-[:ISSUED_TO]->(:Supplier)" in planner_prompt


async def test_streaming_request_gets_chunks_then_an_empty_closing_answer(make_stack) -> None:
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url)
        messages = await collect(stack, "Which supplier has the most purchase orders?", streaming=True)
    *chunks, final = [m for m in messages if m.message_type == "answer"]
    assert chunks and all((c.end_of_message, c.end_of_dialog) == (False, False) and c.content for c in chunks)
    assert (final.end_of_message, final.end_of_dialog, final.content) == (True, True, "")
    assert "".join(c.content for c in chunks).startswith("Acme Industrial has the most purchase orders")


async def test_unplannable_question_gets_a_clear_error_not_silence(make_stack) -> None:
    bad_plan = json.dumps({"steps": [{"id": "a", "function": "Teleport", "arguments": {}, "dependencies": []}]})
    with ScriptedLLM(lambda body: (200, bad_plan)) as llm:
        stack = await make_stack(llm.base_url)
        messages = await collect(stack, "Teleport me to the moon")
    final = messages[-1]
    assert final.message_type == "error" and final.end_of_dialog
    assert final.error is not None and final.error.type == "agent-error"
    assert "Could not make a usable plan" in final.content and "Teleport" in final.content
    # the first answer, two repair attempts, then the query form (the same reply: no form, so no plan from it)
    assert len(llm.requests) == 4 and is_query_form(llm.requests[3])


async def test_a_question_no_plan_could_answer_is_answered_from_the_query_form(make_stack) -> None:
    bad_plan = json.dumps({"steps": [{"id": "a", "function": "Teleport", "arguments": {}, "dependencies": []}]})
    ranked = json.dumps(
        {
            "start": {"label": "Supplier", "key": "", "value": ""},
            "steps": [{"relationship": "ISSUED_TO", "direction": "incoming"}],
            "condition": {"key": "", "operator": "=", "value": ""},
            "combine": "none",
            "other": {"label": "Supplier", "key": "", "value": ""},
            "answer": "most_connected",
            "answer_key": "",
        }
    )

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_query_form(body):
            return 200, ranked
        if is_synthesis(body):
            return 200, "Acme Industrial has the most purchase orders, 135."
        return 200, bad_plan

    with ScriptedLLM(respond) as llm:
        stack = await make_stack(llm.base_url)
        messages = await collect(stack, "Which supplier has the most purchase orders?")
    final = messages[-1]
    assert final.message_type == "answer" and final.content.startswith("Acme Industrial has the most")
    assert any("written from the query form" in m.content for m in messages)


async def test_llm_rejecting_credentials_fails_fast_with_the_reason(make_stack) -> None:
    with ScriptedLLM(lambda body: (401, "invalid api key")) as llm:
        stack = await make_stack(llm.base_url, max_retries=3)
        messages = await collect(stack, "Anything at all?")
    final = messages[-1]
    assert final.message_type == "error"
    assert "HTTP 401" in final.content and "invalid api key" in final.content
    assert len(llm.requests) == 1  # non-retryable: no second attempt


async def test_malformed_request_gets_an_error_and_the_bridge_keeps_serving(make_stack) -> None:
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url)
        client = pulsar_client(stack.config.pulsar_url)
        consumer = await client.subscribe(
            stack.config.response_topic, "rr-malformed", initial_position=pulsar.InitialPosition.Latest
        )
        producer = await client.create_producer(stack.request_topic, batching_enabled=False)
        await producer.send(b'{"question": ', properties={"id": "broken-1"})
        reply = await asyncio.wait_for(consumer.receive(), timeout=20)
        body = json.loads(reply.data())
        await client.close()
        assert reply.properties()["id"] == "broken-1"
        assert body["message_type"] == "error" and body["end_of_dialog"] is True
        assert body["error"]["type"] == "agent-error" and "not valid JSON" in body["error"]["message"]
        # The next good request is still answered.
        messages = await collect(stack, "Which supplier has the most purchase orders?")
        assert messages[-1].message_type == "answer"


async def test_seed_worked_examples_stream_through_pulsar(make_stack, falkordb_url: str, unique: str) -> None:
    """An empty result -> broadened retry -> accepted at 0.85, and three steps with a weak middle
    step recovered on retry) as a TrustGraph client sees them: every message on the response topic."""
    graph = f"seed-e2e-{unique}"
    db = FalkorDB.from_url(falkordb_url)
    await db.select_graph(graph).query(
        "CREATE (:Entity {name: 'Entity X'}), (:Entity {name: 'Entity Y'}), "
        "(:Document {title: 'EU AI Act obligations', topic: 'AI regulation'}), "
        "(:Document {title: 'US executive order on AI safety', topic: 'AI regulation'})"
    )
    topic_calls = {"n": 0}

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        question = json.dumps(body["messages"])
        if is_planning(body) and "connections between" in question:
            return 200, json.dumps(
                {
                    "steps": [
                        {
                            "id": "s1",
                            "function": "GraphQuery",
                            "dependencies": [],
                            "arguments": {
                                "query": "MATCH path=(x:Entity {name:'X'})-[*..3]-(y:Entity {name:'Y'}) RETURN path"
                            },
                        }
                    ]
                }
            )
        if is_planning(body):
            return 200, json.dumps(
                {
                    "steps": [
                        {
                            "id": "s1",
                            "function": "GraphQuery",
                            "dependencies": [],
                            "arguments": {
                                "query": "MATCH (d:Document) WHERE d.topic = 'AI regulation' RETURN d.title AS title"
                            },
                        },
                        {
                            "id": "s2",
                            "function": "TextCompletion",
                            "dependencies": ["s1"],
                            "arguments": {"prompt": "Extract the key topics"},
                        },
                        {
                            "id": "s3",
                            "function": "TextCompletion",
                            "dependencies": ["s2"],
                            "arguments": {"prompt": "Summarize the main topics"},
                        },
                    ]
                }
            )
        if is_synthesis(body):
            return (
                200,
                "Entity X and Entity Y exist but are not connected."
                if "connections" in question
                else "The EU AI Act obligations and the US executive order on AI safety.",
            )
        if "Extract the key topics" in body["messages"][-1]["content"]:
            topic_calls["n"] += 1
            return 200, (
                "Perhaps budgets and weather."
                if topic_calls["n"] == 1
                else "EU AI Act obligations; US executive order on AI safety."
            )
        return 200, "EU AI Act obligations and the US executive order on AI safety."

    try:
        with ScriptedLLM(respond) as llm:
            stack = await make_stack(llm.base_url, graph_name=graph)
            first = await collect(stack, "What are the connections between Entity X and Entity Y?")
            second = await collect(stack, "Summarize the main topics discussed about AI regulation")
    finally:
        await db.select_graph(graph).delete()
        await db.aclose()

    text = "\n".join(m.content for m in first)
    assert "retrying with the same arguments after a backoff" in text and "retrying with adjusted arguments" in text
    assert first[-1].message_type == "answer" and re.search(r"Confidence: \d\.\d\d", first[-1].content)
    assert "weakest supporting step 0.85" in first[-1].content  # the broadened retry's score, now calibrated
    assert len(second) >= 6 and second[-1].message_type == "answer"
    assert "Step s2: confidence" in "\n".join(m.content for m in second)  # the retry note for the weak step


async def test_the_web_ui_shows_the_question_and_what_each_activity_does(make_stack) -> None:
    """Temporal's conventions: a static summary (the question) and details (where the request came from and
    where its answer goes) on the run, and a one-line summary on every activity call (which step, which tool)."""
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url)
        request_id = f"ui-{stack.unique}"
        request = AgentRequest(question="Which supplier has the most purchase orders?", collection="acme")
        [
            m
            async for m in ask(
                stack.config.pulsar_url,
                request,
                request_topic=stack.request_topic,
                response_topic=stack.config.response_topic,
                timeout_s=60,
                request_id=request_id,
                runs=RunLookup(stack.client),
            )
        ]
        handle = stack.client.get_workflow_handle(workflow_id_for(request_id))
        await handle.result()  # the answer is published before the run's last activity (its audit record)
        description = await handle.describe()
        summaries = [
            e.user_metadata.summary
            async for e in handle.fetch_history_events()
            if e.HasField("activity_task_scheduled_event_attributes")
        ]

    assert await description.static_summary() == "Which supplier has the most purchase orders?"
    details = await description.static_details() or ""
    assert f"request id: `{request_id}`" in details and f"request topic: `{stack.request_topic}`" in details
    assert f"response topic: `{stack.config.response_topic}`" in details and "collection: `acme`" in details
    converter = stack.client.data_converter.payload_converter
    said = [converter.from_payload(s, str) for s in summaries if s.ByteSize()]
    assert "plan the steps" in said and "step orders: GraphQuery" in said and "step interpret: TextCompletion" in said
    assert "write the answer from 2 result(s)" in said and "record metrics and the audit trail" in said


async def test_a_question_costs_only_the_round_trips_its_work_needs(make_stack) -> None:
    """The messages leave from the worker (local activities, no server round trip each) and a worker without
    actions has nothing to route: the run schedules its plan, its steps, its synthesis, its record, and the one
    write of its trace to TrustGraph's store once the answer is out (workflows/explain_store.py)."""
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url)
        request_id = f"trips-{stack.unique}"
        messages = [
            m
            async for m in ask(
                stack.config.pulsar_url,
                AgentRequest(question="Who has the most orders?"),
                request_topic=stack.request_topic,
                timeout_s=60,
                request_id=request_id,
                response_topic=stack.config.response_topic,
                runs=RunLookup(stack.client),
            )
        ]
        handle = stack.client.get_workflow_handle(workflow_id_for(request_id))
        await handle.result()
        events = [e async for e in handle.fetch_history_events()]

    assert messages[-1].message_type == "answer" and len(messages) == 7 + 5  # 5: TrustGraph's explain messages
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert sorted(scheduled) == sorted(
        ["plan", "GraphQuery", "TextCompletion", "synthesize", "record_run", "store_explain"]
    )
    local = [e for e in events if e.HasField("marker_recorded_event_attributes")]
    assert local, "the messages were published by local activities, recorded as markers"
