"""A sub-goal of TrustGraph's supervisor on this service's topic: answered by a run of this service and reported
to the supervisor's aggregator (react_request_topic) as the `subagent-completion` AgentRequest TrustGraph's own
sub-agent sends (trustgraph-flow 2.11.1, orchestrator/pattern_base.py), read here with TrustGraph's schema
class; the caller's dialog is never ended by a sub-goal, not even by one that fails."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pulsar
from trustgraph.base.serialization import dict_to_dataclass
from trustgraph.schema import AgentRequest as TgAgentRequest

from bridge.relay import Routing
from contracts.explain import PROV_DERIVED, RDF_TYPE, TG
from service.connections import pulsar_client
from tests.scripted_llm import ScriptedLLM, plan_then_answer

ANSWER = "Acme Industrial has the most purchase orders (135). It is followed by Globex Supply with 56 orders."
PLAN = json.dumps(
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
BAD_PLAN = json.dumps({"steps": [{"id": "s1", "function": "Teleport", "arguments": {}, "dependencies": []}]})
GOALS = ("Which supplier has the most purchase orders?", "Which supplier comes second by purchase orders?")


answers = plan_then_answer(PLAN, ANSWER)  # this service's model: one graph query for every question


def facts(message: dict[str, Any]) -> set[tuple[str, str]]:
    """An explain message's (predicate, object) pairs, as its JSON carries them."""
    return {(t["p"]["iri"], t["o"]["iri"] or t["o"]["value"]) for t in message["explain_triples"]}


def sub_goal(goal: str, correlation_id: str, session_id: str = "", question: str = "") -> bytes:
    """A sub-goal as TrustGraph's SupervisorPattern._decompose_and_fanout writes it (its question is the goal)."""
    return json.dumps(
        {
            "question": question or goal,
            "state": "",
            "group": ["default"],
            "history": [],
            "collection": "default",
            "streaming": False,
            "session_id": session_id or str(uuid.uuid4()),
            "conversation_id": "conv-parent",
            "pattern": "react",
            "task_type": "general",
            "framing": "",
            "correlation_id": correlation_id,
            "parent_session_id": "parent-session",
            "subagent_goal": goal,
            "expected_siblings": len(GOALS),
        }
    ).encode()


async def supervise(stack, goals: tuple[str, ...], react_topic: str) -> tuple[list[Any], list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    """Send the sub-goals under one parent id; return the completions the aggregator's topic received (as
    TrustGraph decodes them, with their id) and what the caller's response topic got meanwhile."""
    correlation_id = str(uuid.uuid4())
    return await fan_out(stack, [sub_goal(goal, correlation_id) for goal in goals], react_topic)


async def fan_out(  # type: ignore[no-untyped-def]
    stack, payloads: list[bytes], react_topic: str, one_at_a_time: bool = False
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Send these sub-goals under one parent id (`one_at_a_time`: each once the one before has reported): what
    `supervise` returns."""
    parent, correlation_id = str(uuid.uuid4()), json.loads(payloads[0])["correlation_id"]
    client = pulsar_client(stack.config.pulsar_url)
    aggregator = await client.subscribe(
        react_topic, "agent-manager--orchestrator", consumer_type=pulsar.ConsumerType.Shared
    )
    caller = await client.subscribe(
        stack.config.response_topic, f"rr-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Latest
    )
    said: list[dict[str, Any]] = []

    async def listen() -> None:
        while True:
            message = await caller.receive()
            if message.properties().get("id") == parent:
                said.append(json.loads(message.data()))

    async def reported() -> Any:
        message = await asyncio.wait_for(aggregator.receive(), 60)
        assert message.properties()["id"] == parent
        return dict_to_dataclass(json.loads(message.data()), TgAgentRequest)

    listening = asyncio.create_task(listen())
    try:
        producer = await client.create_producer(stack.request_topic, batching_enabled=False)
        completions = []
        for payload in payloads:
            await producer.send(payload, properties={"id": parent})
            if one_at_a_time:
                completions.append(await reported())
        completions += [await reported() for _ in range(len(payloads) - len(completions))]
        await asyncio.sleep(1)  # anything sent to the caller after the completions would arrive meanwhile
    finally:
        listening.cancel()
        await client.close()
    assert all(c.correlation_id == correlation_id for c in completions)
    return completions, said


async def test_sub_goals_are_answered_here_and_reported_to_the_supervisor_not_the_caller(make_stack) -> None:
    react_topic = f"non-persistent://tg/request/agent-orchestrator:{uuid.uuid4().hex[:6]}:default"
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(react_request_topic=react_topic))
        completions, said = await supervise(stack, GOALS, react_topic)
    assert sorted(c.subagent_goal for c in completions) == sorted(GOALS)  # siblings under one id: a run each
    for completion in completions:
        [step] = completion.history
        assert step.step_type == "subagent-completion" and step.observation.startswith(ANSWER)
        assert "Confidence: " in step.observation  # the supervisor combines answers that state their confidence
        assert (completion.question, completion.expected_siblings) == (completion.subagent_goal, len(GOALS))
        assert completion.parent_session_id == "parent-session" and completion.session_id
        assert (completion.pattern, completion.streaming, completion.group) == ("", False, ["default"])
    assert any(m["message_type"] == "thought" for m in said)  # the caller sees the sub-goals' progress
    assert not [m for m in said if m["end_of_dialog"]]  # but only the supervisor ends its dialog
    # Each sub-goal's trace is linked as TrustGraph links its sub-agents' (orchestrator/react_pattern.py): the
    # session derived from the supervisor's decomposition, the answer a Conclusion at `<session>/final`, the node
    # the supervisor derives its finding from (service.py, emit_finding_triples).
    explained = {m["explain_id"]: facts(m) for m in said if m["message_type"] == "explain"}
    for completion in completions:
        session = f"urn:trustgraph:agent:{completion.session_id}"
        assert (PROV_DERIVED, "urn:trustgraph:agent:parent-session/decompose") in explained[session]
        assert (RDF_TYPE, TG + "Conclusion") in explained[f"{session}/final"]
        assert (PROV_DERIVED, f"{session}/step/0") in explained[f"{session}/final"]
        assert f"{session}/synthesis" not in explained


async def test_a_sub_goal_that_fails_still_reports_and_never_ends_the_caller_s_dialog(make_stack) -> None:
    react_topic = f"non-persistent://tg/request/agent-orchestrator:{uuid.uuid4().hex[:6]}:default"
    with ScriptedLLM(lambda body: (200, BAD_PLAN)) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(react_request_topic=react_topic))
        [completion], said = await supervise(stack, GOALS[:1], react_topic)
    [step] = completion.history
    assert step.step_type == "subagent-completion"
    assert step.observation.startswith("This sub-goal could not be answered: Could not make a usable plan")
    assert not [m for m in said if m["end_of_dialog"] or m["message_type"] == "error"]


async def test_a_sub_goal_that_cannot_be_read_is_reported_failed_and_never_ends_the_caller_s_dialog(make_stack) -> None:
    """A bad request (here a question over the limit) is refused for the supervisor, as that sub-goal's failure."""
    react_topic = f"non-persistent://tg/request/agent-orchestrator:{uuid.uuid4().hex[:6]}:default"
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(react_request_topic=react_topic))
        payload = sub_goal(GOALS[0], str(uuid.uuid4()), question="Which supplier? " * 1100)
        [completion], said = await fan_out(stack, [payload], react_topic)
    [step] = completion.history
    assert step.step_type == "subagent-completion" and completion.subagent_goal == GOALS[0]
    assert step.observation.startswith("This sub-goal could not be answered: Bad AgentRequest: question is ")
    assert not [m for m in said if m["end_of_dialog"] or m["message_type"] == "error"]


async def test_a_sub_goal_whose_start_is_refused_is_reported_failed_and_never_ends_the_caller_s_dialog(
    make_stack,
) -> None:
    """A sub-goal whose run cannot start (here: its run's id is taken by another request) reports its failure;
    its sibling is answered; the caller's dialog is left to the supervisor."""
    react_topic = f"non-persistent://tg/request/agent-orchestrator:{uuid.uuid4().hex[:6]}:default"
    correlation_id, session_id = str(uuid.uuid4()), str(uuid.uuid4())
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(react_request_topic=react_topic))
        first = sub_goal(GOALS[0], correlation_id, session_id)
        taken = sub_goal(GOALS[1], correlation_id, session_id)  # the same session: the same run id
        (answered, refused), said = await fan_out(stack, [first, taken], react_topic, one_at_a_time=True)
    assert answered.history[0].observation.startswith(ANSWER)
    assert refused.subagent_goal == GOALS[1] and refused.history[0].step_type == "subagent-completion"
    assert refused.history[0].observation.startswith("This sub-goal could not be answered: Request id ")
    assert not [m for m in said if m["end_of_dialog"] or m["message_type"] == "error"]
