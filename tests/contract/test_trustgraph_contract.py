"""The drop-in contract, checked with TrustGraph's own client code (trustgraph-base 2.11.1) and a 1.x-era
client (pulsar Record + JsonSchema) against the bridge on pulsar-lite, with no TrustGraph service running."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pulsar
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pulsar.schema import Array, Boolean, JsonSchema, Map, Record, String
from temporalio.service import RPCError
from trustgraph.base.agent_client import AgentClient
from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.base.request_response_spec import _make_impl_wrapper
from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import AgentResponse as TgAgentResponse

from bridge.canary import takes_request
from bridge.relay import Routing
from contracts.names import workflow_id_for
from contracts.override import OverrideIdentity, Role
from overrides.signing import public_key_text
from service.connections import pulsar_client, pulsar_logger
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis

ANSWER = "Acme Industrial has the most purchase orders (135). It is followed by Globex Supply with 56 orders."
GOOD_PLAN = json.dumps(
    {
        "steps": [
            {
                "id": "s1",
                "function": "GraphQuery",
                "dependencies": [],
                "arguments": {
                    "query": "MATCH (po:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) "
                    "RETURN s.name AS supplier, count(po) AS orders ORDER BY orders DESC LIMIT 2"
                },
            }
        ]
    }
)
# The question's names exist but the plan's value does not: a weak result that waits for a human.
WAITING_QUESTION = "Who is the rival of Acme Industrial?"
WAITING_PLAN = json.dumps(
    {
        "steps": [
            {
                "id": "s1",
                "function": "GraphQuery",
                "dependencies": [],
                "arguments": {"query": "MATCH (s:Supplier {name: 'Nobody Ltd'}) RETURN s.name AS name"},
            }
        ]
    }
)


def answers(body: dict[str, Any]) -> tuple[int, str]:
    if is_planning(body):
        return 200, WAITING_PLAN if "rival" in json.dumps(body["messages"]) else GOOD_PLAN
    if is_synthesis(body):
        return 200, ANSWER
    return 200, "noted"


def queue(kind: str, stack) -> str:  # type: ignore[no-untyped-def]
    """TrustGraph's queue id for this test's topics (`request:tg:agent:<workspace>:<flow>`)."""
    return f"{kind}:tg:agent:{stack.config.workspace}:{stack.config.flow}"


@pytest_asyncio.fixture
async def tg_agent(make_stack) -> AsyncIterator[Any]:  # type: ignore[no-untyped-def]
    """TrustGraph's AgentClient wired exactly as its RequestResponseSpec wires it."""
    clients: list[RequestResponseClient] = []
    backends: list[Any] = []

    async def connect(stack) -> Any:  # type: ignore[no-untyped-def]
        backend = get_async_pubsub(pulsar_host=stack.config.pulsar_url)
        backends.append(backend)
        rr = await RequestResponseClient.create(
            backend=backend,
            request_topic=queue("request", stack),
            response_topic=queue("response", stack),
            request_schema=TgAgentRequest,
            response_schema=TgAgentResponse,
        )
        clients.append(rr)
        return _make_impl_wrapper(rr, AgentClient)

    yield connect
    for rr in clients:
        await rr.close()
    for backend in backends:  # its pulsar client, left open, aborts the interpreter at exit
        await backend.close()


async def test_agent_client_invoke_gets_the_answer_with_thoughts_and_observations(make_stack, tg_agent) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        thoughts: list[str] = []
        observations: list[str] = []

        async def think(content: str, end: bool) -> None:
            thoughts.append(content)

        async def observe(content: str, end: bool) -> None:
            observations.append(content)

        answer = await agent.invoke(
            "Which supplier has the most purchase orders?", think=think, observe=observe, timeout=60
        )
    assert answer.startswith(ANSWER) and re.search(r"Confidence: \d\.\d\d - calibrated: ", answer)
    assert thoughts[0].startswith("Planning how to answer") and any("Plan with 1 step" in o for o in observations)


async def test_streaming_request_gets_chunks_then_an_empty_final_answer(make_stack, tg_agent) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        answers_seen: list[Any] = []
        async for response in agent._rr_client.request_stream(
            TgAgentRequest(question="Which supplier has the most purchase orders?", streaming=True), timeout=60
        ):
            if response.message_type == "answer":
                answers_seen.append(response)
            if response.end_of_dialog:
                break
    *chunks, final = answers_seen
    assert len(chunks) >= 2 and all(not c.end_of_message and c.content for c in chunks)
    assert final.content == "" and final.end_of_message and final.end_of_dialog
    assert "".join(c.content for c in chunks).startswith(ANSWER)


async def test_error_path_raises_in_agent_client(make_stack, tg_agent) -> None:
    bad = json.dumps({"steps": [{"id": "s1", "function": "Teleport", "arguments": {}, "dependencies": []}]})
    with ScriptedLLM(lambda body: (200, bad)) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        with pytest.raises(RuntimeError, match="Could not make a usable plan"):
            await agent.invoke("Teleport me", timeout=60)


# -- a TrustGraph 1.x client: pulsar Records with JsonSchema, the legacy topic and fields ----------------------


class LegacyError(Record):
    type = String()
    message = String()


class LegacyAgentStep(Record):
    thought = String()
    action = String()
    arguments = Map(String())
    observation = String()


class LegacyAgentRequest(Record):
    question = String()
    plan = String()
    state = String()
    history = Array(LegacyAgentStep())


class LegacyAgentResponse(Record):
    answer = String()
    error = LegacyError()
    thought = String()
    observation = String()
    end_of_dialog = Boolean()


def legacy_dialog(pulsar_url: str, request_topic: str, response_topic: str) -> list[LegacyAgentResponse]:
    client = pulsar.Client(pulsar_url, logger=pulsar_logger())
    try:
        consumer = client.subscribe(
            response_topic,
            f"legacy-{uuid.uuid4().hex[:8]}",
            schema=JsonSchema(LegacyAgentResponse),
            initial_position=pulsar.InitialPosition.Latest,
        )
        producer = client.create_producer(request_topic, schema=JsonSchema(LegacyAgentRequest))
        request_id = str(uuid.uuid4())
        producer.send(
            LegacyAgentRequest(
                question="Which supplier has the most purchase orders?", plan='{"max_retries": 1}', state="", history=[]
            ),
            properties={"id": request_id},
        )
        received = []
        while True:
            message = consumer.receive(timeout_millis=60_000)
            consumer.acknowledge(message)
            if message.properties().get("id") != request_id:
                continue
            response = message.value()
            received.append(response)
            if response.error is not None or response.answer is not None:  # how 1.x clients end a dialog
                return received
    finally:
        client.close()


async def test_agent_client_on_a_non_default_flow_hears_back_on_that_flow(make_stack, tg_agent) -> None:
    """TrustGraph's client for flow `myflow` sends on `agent:<workspace>:myflow` and listens on the response
    topic of that flow only."""
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, flow="myflow")
        assert stack.config.request_topics == [f"non-persistent://tg/request/agent:test-{stack.unique}:myflow"]
        agent = await tg_agent(stack)
        answer = await agent.invoke("Which supplier has the most purchase orders?", timeout=60)
    assert answer.startswith(ANSWER)


async def test_legacy_client_receives_thought_observation_and_final_answer(make_stack) -> None:
    """A 1.x client sends on `agent:<flow>` and listens on `response/agent:<flow>`: it is answered there."""
    flow = f"legacy-{uuid.uuid4().hex[:6]}"
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, extra_request_topics=[f"non-persistent://tg/request/agent:{flow}"])
        received = await asyncio.to_thread(
            legacy_dialog,
            stack.config.pulsar_url,
            stack.config.request_topics[1],
            f"non-persistent://tg/response/agent:{flow}",
        )
    assert received[0].thought.startswith("Planning how to answer") and received[0].answer is None
    assert any(r.observation and "Plan with 1 step" in r.observation for r in received)
    assert all(r.error is None for r in received)
    assert received[-1].answer.startswith(ANSWER) and received[-1].end_of_dialog


# -- delivery semantics -------------------------------------------------------------------------------------


async def send_raw(stack, payload: bytes, request_id: str | None) -> None:  # type: ignore[no-untyped-def]
    client = pulsar_client(stack.config.pulsar_url)
    producer = await client.create_producer(stack.request_topic, batching_enabled=False)
    await producer.send(payload, properties={"id": request_id} if request_id else {})
    await client.close()


async def dialog(
    stack,
    request_id: str,
    send: bytes | None = None,
    wait_s: float = 60,  # type: ignore[no-untyped-def]
    seen: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every response with this id until end_of_dialog, read off the response topic as raw JSON (into
    `seen`, when given, as they arrive)."""
    client = pulsar_client(stack.config.pulsar_url)
    consumer = await client.subscribe(
        stack.config.response_topic, f"rr-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Latest
    )
    if send is not None:
        await send_raw(stack, send, request_id)
    seen = [] if seen is None else seen
    try:
        while True:
            message = await asyncio.wait_for(consumer.receive(), wait_s)
            await consumer.acknowledge(message)
            if message.properties().get("id") == request_id:
                seen.append(json.loads(message.data()))
                if seen[-1]["end_of_dialog"]:
                    return seen
    finally:
        await client.close()


async def test_a_duplicated_request_starts_exactly_one_workflow(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        request_id = str(uuid.uuid4())
        payload = json.dumps({"question": "Which supplier has the most purchase orders?"}).encode()
        listening = asyncio.create_task(dialog(stack, request_id))
        await asyncio.sleep(0.5)
        await send_raw(stack, payload, request_id)
        await send_raw(stack, payload, request_id)
        messages = await listening
        await asyncio.sleep(1.0)  # a second run, if there were one, would be visible by now
        runs = [w async for w in stack.client.list_workflows(f"WorkflowId = '{workflow_id_for(request_id)}'")]
    assert len(runs) == 1
    ids = [m["message_id"] for m in messages]
    assert len(ids) == len(set(ids)) and messages[-1]["message_type"] == "answer"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"\x00\xffnot json", "not UTF-8"),
        (b'{"question": ["not", "a", "string"]}', "has no question"),
        (b'{"question": "q", "history": 5}', "wrong types: history"),
        (json.dumps({"question": "x" * 400_000}).encode(), "the limit is"),
    ],
)
async def test_a_poison_message_is_answered_and_the_next_request_still_served(
    make_stack, payload: bytes, reason: str
) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        await send_raw(stack, payload, None)  # no id: logged and dropped, nothing to answer
        poison = await dialog(stack, "poison-" + uuid.uuid4().hex, send=payload)
        good = await dialog(stack, str(uuid.uuid4()), send=b'{"question": "Which supplier has the most orders?"}')
    assert poison[-1]["message_type"] == "error" and reason in poison[-1]["error"]["message"]
    assert poison[-1]["error"]["type"] == "agent-error"
    assert good[-1]["message_type"] == "answer"


async def test_a_failed_workflow_produces_an_error_response(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        request_id = str(uuid.uuid4())
        listening = asyncio.create_task(
            dialog(stack, request_id, send=json.dumps({"question": WAITING_QUESTION}).encode())
        )
        handle = await wait_for_override(stack, request_id)
        await handle.terminate(reason="operator stopped it")
        messages = await listening
    assert messages[-1]["message_type"] == "error" and "operator stopped it" in messages[-1]["error"]["message"]


async def wait_for_override(stack, request_id: str) -> Any:  # type: ignore[no-untyped-def]
    """The run's handle once it waits for an override (it may not have started when we first ask)."""
    handle = stack.client.get_workflow_handle(workflow_id_for(request_id))
    for _ in range(150):
        try:
            if (await handle.query("status")).get("pending_override"):
                return handle
        except RPCError:
            pass
        await asyncio.sleep(0.2)
    raise TimeoutError("the run never asked for an override")


# -- overrides over Pulsar ----------------------------------------------------------------------------------


async def test_a_follow_up_agent_request_answers_an_override(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, max_retries=0)
        request_id = str(uuid.uuid4())
        waiting = asyncio.create_task(
            dialog(stack, request_id, send=json.dumps({"question": WAITING_QUESTION}).encode())
        )
        await wait_for_override(stack, request_id)
        rejected = await dialog(
            stack,
            str(uuid.uuid4()),
            send=json.dumps({"question": "s9 accept", "state": "override", "correlation_id": request_id}).encode(),
        )
        accepted = await dialog(
            stack,
            str(uuid.uuid4()),
            send=json.dumps(
                {
                    "question": json.dumps({"step_id": "s1", "decision": "accept", "by": "tg-user"}),
                    "state": "override",
                    "correlation_id": workflow_id_for(request_id),
                }
            ).encode(),
        )
        original = await waiting
    assert rejected[-1]["message_type"] == "error" and "unknown step 's9'" in rejected[-1]["error"]["message"]
    assert accepted[-1]["message_type"] == "answer" and accepted[-1]["content"] == "accept recorded for step s1"
    assert any("Step s1 accepted by tg-user" in m["content"] for m in original)
    assert original[-1]["message_type"] == "answer"


async def test_with_signing_keys_a_pulsar_caller_signs_over_the_challenge_the_stream_names(
    make_stack, tmp_path: Path
) -> None:
    """A caller that only speaks Pulsar learns the challenge from the override request it was streamed,
    signs offline with the CLI (no Temporal access) and answers with a follow-up; an unsigned answer and
    the same proof sent twice are refused."""
    private = Ed25519PrivateKey.generate()
    key_file = tmp_path / "dana.pem"
    key_file.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    dana = OverrideIdentity(name="dana", public_key=public_key_text(private), roles=[Role.REVIEW])
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, max_retries=0, override_keys=[dana])
        request_id = str(uuid.uuid4())
        streamed: list[dict[str, Any]] = []
        waiting = asyncio.create_task(
            dialog(stack, request_id, seen=streamed, send=json.dumps({"question": WAITING_QUESTION}).encode())
        )
        await wait_for_override(stack, request_id)
        for _ in range(100):  # the override request is published just after the run starts waiting
            if any("over challenge" in m["content"] for m in streamed):
                break
            await asyncio.sleep(0.1)
        asked = next(m["content"] for m in streamed if "over challenge" in m["content"])
        challenge = re.search(r"over challenge (\S+)\.", asked).group(1)  # type: ignore[union-attr]
        unsigned = await dialog(
            stack,
            str(uuid.uuid4()),
            send=json.dumps({"question": "s1 accept", "state": "override", "correlation_id": request_id}).encode(),
        )
        workflow_id = workflow_id_for(request_id)
        signing = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "cli",
            "override",
            workflow_id,
            "s1",
            "accept",
            "--by",
            "dana",
            "--key",
            str(key_file),
            "--challenge",
            challenge,
            "--print",
            "--temporal-address",
            "127.0.0.1:1",  # never contacted: signing offline needs no Temporal
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        proof, problems = await signing.communicate()
        assert signing.returncode == 0, problems.decode()
        follow_up = json.dumps(
            {"question": proof.decode().strip(), "state": "override", "correlation_id": workflow_id}
        ).encode()
        accepted = await dialog(stack, str(uuid.uuid4()), send=follow_up)
        original = await waiting
        again = await dialog(stack, str(uuid.uuid4()), send=follow_up)
    assert "role 'review'" in asked and "--challenge" in asked
    assert unsigned[-1]["message_type"] == "error"
    assert unsigned[-1]["error"]["message"].startswith("Override rejected: not authorized: no identity given")
    assert accepted[-1]["message_type"] == "answer" and accepted[-1]["content"] == "accept recorded for step s1"
    assert any("Step s1 accepted by dana" in m["content"] for m in original)
    assert original[-1]["message_type"] == "answer"
    assert again[-1]["message_type"] == "error" and "Override" in again[-1]["error"]["message"]


# -- canary and fallback ------------------------------------------------------------------------------------


async def react_stand_in(stack, topic: str, got: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Stands in for TrustGraph's agent-manager on its own request topic: answers every request it gets.
    Runs until cancelled (a pulsar receive is never cancelled mid-wait: that can drop the message)."""
    client = pulsar_client(stack.config.pulsar_url)
    consumer = await client.subscribe(topic, "agent-manager--react", consumer_type=pulsar.ConsumerType.Shared)
    producer = await client.create_producer(stack.config.response_topic, batching_enabled=False)
    try:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            got.append(message.properties()["id"])
            answer = {
                "message_type": "answer",
                "content": "answered by react",
                "end_of_message": True,
                "end_of_dialog": True,
                "error": None,
                "message_id": "react",
            }
            await producer.send(json.dumps(answer).encode(), properties={"id": message.properties()["id"]})
    finally:
        await client.close()


async def test_canary_share_goes_to_the_existing_agent_deterministically(make_stack) -> None:
    react_topic = f"non-persistent://tg/request/agent-react:{uuid.uuid4().hex[:6]}:default"
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(traffic_percentage=50, react_request_topic=react_topic))
        forwarded: list[str] = []
        react = asyncio.create_task(react_stand_in(stack, react_topic, forwarded))
        await asyncio.sleep(0.5)
        request_ids = [str(uuid.uuid4()) for _ in range(6)]
        results = await asyncio.gather(
            *(dialog(stack, rid, send=b'{"question": "Who leads on orders?"}') for rid in request_ids)
        )
        react.cancel()
    for request_id, messages in zip(request_ids, results, strict=True):
        if takes_request(request_id, True, 50):
            assert messages[-1]["content"].startswith(ANSWER)
        else:
            assert messages[-1]["content"] == "answered by react" and request_id in forwarded


async def test_a_failed_run_falls_back_to_the_existing_agent(make_stack) -> None:
    react_topic = f"non-persistent://tg/request/agent-react:{uuid.uuid4().hex[:6]}:default"
    bad = json.dumps({"steps": [{"id": "s1", "function": "Teleport", "arguments": {}, "dependencies": []}]})
    with ScriptedLLM(lambda body: (200, bad)) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(fallback_to_react=True, react_request_topic=react_topic))
        forwarded: list[str] = []
        react = asyncio.create_task(react_stand_in(stack, react_topic, forwarded))
        await asyncio.sleep(0.5)
        request_id = str(uuid.uuid4())
        messages = await dialog(stack, request_id, send=b'{"question": "Teleport me"}')
        react.cancel()
    assert forwarded == [request_id]
    assert all(m["message_type"] != "error" for m in messages) and messages[-1]["content"] == "answered by react"


# -- TrustGraph's own loop on the same topic ------------------------------------------------------------------

CONTINUATION = {
    "question": "Who leads on orders?",
    "history": [
        {
            "thought": "I should query the graph",
            "action": "knowledge-query",
            "arguments": {"question": "orders"},
            "observation": "Acme Industrial has 135 orders",
            "step_type": "react",
        }
    ],
}
# As TrustGraph 2.11.1's orchestrator writes a ReAct continuation: no step type, the pattern it chose.
ORCHESTRATOR_CONTINUATION = {
    "question": "Who leads on orders?",
    "pattern": "react",
    "task_type": "general",
    "session_id": "session-2",
    "history": [
        {
            "thought": "I should query the graph",
            "action": "kq-orders",
            "arguments": {"question": "orders"},
            "observation": "Acme Industrial has 135 orders",
        }
    ],
}
SUPERVISOR = {"question": "Compare the suppliers", "pattern": "supervisor"}
SUB_GOAL = {
    "question": "Count the orders of Acme Industrial",
    "correlation_id": "parent-1",
    "parent_session_id": "session-1",
    "subagent_goal": "Count the orders of Acme Industrial",
    "expected_siblings": 2,
}


async def test_requests_of_trustgraph_s_own_loop_go_to_its_agent_and_start_no_run(make_stack) -> None:
    """A ReAct continuation and a supervisor's sub-goal (with serve_subagent_goals off), sent back onto the
    agent topic by TrustGraph's orchestrator, and a request for the supervisor pattern reach TrustGraph's agent
    (react_request_topic) and never become runs of this service; a plan-then-execute request is answered here."""
    react_topic = f"non-persistent://tg/request/agent-react:{uuid.uuid4().hex[:6]}:default"
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(
            llm.base_url, routing=Routing(react_request_topic=react_topic, serve_subagent_goals=False)
        )
        forwarded: list[str] = []
        react = asyncio.create_task(react_stand_in(stack, react_topic, forwarded))
        await asyncio.sleep(0.5)
        ids = [str(uuid.uuid4()) for _ in range(4)]
        results = [
            await dialog(stack, request_id, send=json.dumps(body).encode())
            for request_id, body in zip(
                ids, (CONTINUATION, ORCHESTRATOR_CONTINUATION, SUB_GOAL, SUPERVISOR), strict=True
            )
        ]
        served = await dialog(
            stack,
            str(uuid.uuid4()),
            send=json.dumps({"question": "Who leads on orders?", "pattern": "plan-then-execute"}).encode(),
        )
        react.cancel()
        runs = [
            w
            async for w in stack.client.list_workflows(" OR ".join(f"WorkflowId = '{workflow_id_for(i)}'" for i in ids))
        ]
    assert forwarded == ids
    assert all(messages[-1]["content"] == "answered by react" for messages in results)
    assert runs == []
    assert served[-1]["content"].startswith(ANSWER)  # a pattern this service serves is answered here


async def test_without_trustgraph_s_agent_a_loop_request_gets_an_error_naming_the_topology(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        request_id = str(uuid.uuid4())
        messages = await dialog(stack, request_id, send=json.dumps(CONTINUATION).encode())
        runs = [w async for w in stack.client.list_workflows(f"WorkflowId = '{workflow_id_for(request_id)}'")]
    assert messages[-1]["message_type"] == "error" and "react_request_topic" in messages[-1]["error"]["message"]
    assert "continuation of TrustGraph's agent loop" in messages[-1]["error"]["message"]
    assert runs == []


async def test_a_pattern_only_trustgraph_has_gets_an_error_without_its_agent(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        messages = await dialog(
            stack,
            str(uuid.uuid4()),
            send=json.dumps({"question": "Compare the suppliers", "pattern": "map-reduce"}).encode(),
        )
    said = messages[-1]["error"]["message"]
    assert messages[-1]["message_type"] == "error" and "the pattern 'map-reduce'" in said
    assert "react_request_topic" in said
