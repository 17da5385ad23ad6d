"""A mixed deployment on one broker: TrustGraph's own `agent-orchestrator` (trustgraph-flow 2.11.1, its own
process) on a topic of its own, and this service's bridge and worker on the flow's agent topic, in the topology
docs/trustgraph.md recommends (react_request_topic set; the orchestrator's `next` is the flow's agent topic).
Plain questions, ReAct requests for TrustGraph's agent (the canary's share, and requests sent to its own topic)
and a supervisor request whose sub-goals come back through the shared topic: every request gets exactly one end
of its dialog, from the agent that should answer it. Both agents write their traces to the flow's triples store,
read back with TrustGraph's own trace reader (tests/trustgraph_trace_reader.py): the supervisor's sub-goals are
linked into its trace as TrustGraph links its own sub-agents', whichever agent answered them."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import pulsar
import pytest

from bench.trustgraph_services import FINAL_ANSWER, topic
from bridge.canary import takes_request
from bridge.relay import Routing
from contracts.delivery import DELIVERY_PROPERTY
from contracts.explain import PROV_DERIVED, RDF_TYPE, TG
from contracts.names import workflow_id_for
from contracts.topics import explainability_topic
from service.connections import pulsar_client
from tests.scripted_llm import ScriptedLLM, plan_then_answer
from tests.trustgraph_orchestrator import SYNTHESIS, OrchestratorServices, orchestrator_process
from tests.trustgraph_trace_reader import read_traces

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
GOALS = ["Which supplier has the most purchase orders?", "Which supplier has the second most purchase orders?"]
SHARE = 50  # the canary: this service answers half the plain requests, TrustGraph's agent the rest


answers = plan_then_answer(PLAN, ANSWER)  # this service's model: one graph query for every question


def request_ids(count: int, taken: bool) -> list[str]:
    """Ids the canary keeps here (taken) or sends to TrustGraph's agent: the split is by id."""
    ids: list[str] = []
    while len(ids) < count:
        candidate = str(uuid.uuid4())
        if takes_request(candidate, True, SHARE) == taken:
            ids.append(candidate)
    return ids


class ResponseTopic:
    """Every message on the flow's response topic, by request id, read from before the first request; a repeat
    of a delivery (the same `delivery_id`: a retried publish, the end of a dialog sent again) is dropped, as the
    contract asks of every client."""

    def __init__(self, pulsar_url: str, response_topic: str) -> None:
        self.client = pulsar_client(pulsar_url)
        self.topic = response_topic
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.ended: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self._task: asyncio.Task[None] | None = None
        self._deliveries: set[tuple[str, str]] = set()

    async def start(self) -> None:
        consumer = await self.client.subscribe(
            self.topic, f"rr-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Latest
        )
        self._task = asyncio.create_task(self._read(consumer))

    async def _read(self, consumer: Any) -> None:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            request_id = message.properties().get("id", "")
            delivery = message.properties().get(DELIVERY_PROPERTY, "")
            if delivery and (request_id, delivery) in self._deliveries:
                continue
            self._deliveries.add((request_id, delivery))
            body = json.loads(message.data())
            self.messages[request_id].append(body)
            if body.get("end_of_dialog"):
                self.ended[request_id].set()

    def ends(self, request_id: str) -> list[dict[str, Any]]:
        return [m for m in self.messages[request_id] if m.get("end_of_dialog")]

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.client.close()


class TriplesStore:
    """Every `Triples` message written to the flow's triples store (a persistent topic), read from the first."""

    def __init__(self, pulsar_url: str, topic: str) -> None:
        self.client = pulsar_client(pulsar_url)
        self.topic = topic
        self.written: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        consumer = await self.client.subscribe(
            self.topic, f"store-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Earliest
        )
        self._task = asyncio.create_task(self._read(consumer))

    async def _read(self, consumer: Any) -> None:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            self.written.append(json.loads(message.data()))

    def facts(self) -> set[tuple[str, str, str]]:
        """(subject, predicate, object) of every triple written."""
        return {
            (t["s"]["iri"], t["p"]["iri"], t["o"]["iri"] or t["o"]["value"]) for m in self.written for t in m["triples"]
        }

    async def until(self, *subjects: str, within_s: float = 60) -> None:
        """Until each subject has been written (a run keeps its trace once its last message went out)."""
        for _ in range(int(within_s * 10)):
            if set(subjects) <= {s for s, _, _ in self.facts()}:
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(f"never written to the triples store: {set(subjects) - {s for s, _, _ in self.facts()}}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.client.close()


async def send(producer: Any, request_id: str, **body: Any) -> None:
    await producer.send(json.dumps(body).encode(), properties={"id": request_id})


async def until_trustgraph_answers(
    pulsar_url: str, own_topic: str, responses: ResponseTopic, within_s: float = 60
) -> None:
    """A request on a non-persistent topic before the orchestrator subscribed is lost: ask until a ReAct
    request (its continuation through the bridge and back) is answered."""
    client = pulsar_client(pulsar_url)
    producer = await client.create_producer(own_topic, batching_enabled=False)
    deadline = time.monotonic() + within_s
    sent: list[str] = []
    resend_at = 0.0
    try:
        while not any(responses.ended[i].is_set() for i in sent):  # any of them: a slow answer is not a lost one
            now = time.monotonic()
            if now > deadline:
                raise RuntimeError("TrustGraph's agent-orchestrator never answered")
            if now >= resend_at:
                sent.append(f"warm-up-{uuid.uuid4()}")
                await send(producer, sent[-1], question="Are the orders in order?")
                resend_at = now + 5
            await asyncio.sleep(0.2)
    finally:
        await client.close()


@pytest.mark.parametrize("serve_subagent_goals", [True, False], ids=["sub-goals here", "sub-goals TrustGraph's"])
async def test_a_mixed_deployment_answers_every_request_once_from_the_right_agent(
    make_stack, tmp_path: Path, unique: str, serve_subagent_goals: bool
) -> None:
    """With serve_subagent_goals on, this service answers the supervisor's sub-goals; off, TrustGraph's own
    ReAct sub-agents do, their continuations and completions passing through the bridge."""
    own_queue = f"request:tg:agent-tg:{unique}"  # TrustGraph's agent, on a topic of its own
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(
            llm.base_url,
            routing=Routing(
                traffic_percentage=SHARE,
                react_request_topic=topic(own_queue),
                serve_subagent_goals=serve_subagent_goals,
            ),
        )
        workspace, flow = stack.config.workspace, stack.config.flow
        services = OrchestratorServices(
            stack.config.pulsar_url,
            own_queue,
            flow_request_queue=f"request:tg:agent:{workspace}:{flow}",
            flow_response_queue=f"response:tg:agent:{workspace}:{flow}",
            goals=GOALS,
            store_queue=f"flow:tg:triples-store:{workspace}:{flow}",
        )
        responses = ResponseTopic(stack.config.pulsar_url, stack.config.response_topic)
        store = TriplesStore(stack.config.pulsar_url, explainability_topic(stack.config.response_topic))
        orchestrator = orchestrator_process(stack.config.pulsar_url, tmp_path / "agent-orchestrator.log")
        client = pulsar_client(stack.config.pulsar_url)
        try:
            await services.start()
            await responses.start()
            await store.start()
            orchestrator.start()
            await services.until_configured()
            await until_trustgraph_answers(stack.config.pulsar_url, topic(own_queue), responses)
            ours, forwarded, supervisor = request_ids(2, taken=True), request_ids(2, taken=False), str(uuid.uuid4())
            # Sent to TrustGraph's agent directly, with ids the canary would keep here: only recognising
            # their continuations (TrustGraph's ReAct steps carry no step type) sends those back to it.
            direct = request_ids(2, taken=True)
            producer = await client.create_producer(stack.request_topic, batching_enabled=False)
            to_trustgraph = await client.create_producer(topic(own_queue), batching_enabled=False)
            for request_id in ours + forwarded:
                await send(producer, request_id, question="Which supplier has the most purchase orders?")
            for request_id in direct:
                await send(to_trustgraph, request_id, question="Are the orders in order?")
            await send(producer, supervisor, question="Compare the two biggest suppliers", pattern="supervisor")
            theirs = [*forwarded, *direct]
            sent = [*ours, *theirs, supervisor]
            await asyncio.wait_for(asyncio.gather(*(responses.ended[i].wait() for i in sent)), 90)
            await asyncio.sleep(2)  # a second end of any dialog would arrive meanwhile
            runs = {
                i: [w async for w in stack.client.list_workflows(f"WorkflowId = '{workflow_id_for(i)}'")] for i in sent
            }
            supervising, sub_sessions, findings = supervisor_trace(store.facts())
            await store.until(*(f"{s}/final" for s in sub_sessions))
            read = await read_traces(store.written, [supervising, *sub_sessions], list(findings.values()))
        finally:
            await client.close()
            orchestrator.stop()
            await responses.stop()
            await services.stop()
            await store.stop()
    assert all(len(responses.ends(i)) == 1 for i in sent), {i: len(responses.ends(i)) for i in sent}
    for request_id in ours:  # this service's: its answer, from its own run
        [end] = responses.ends(request_id)
        assert end["message_type"] == "answer" and end["content"].startswith(ANSWER) and runs[request_id]
    for request_id in theirs:  # TrustGraph's ReAct agent's, its continuation forwarded back: no run here
        [end] = responses.ends(request_id)
        assert end["message_type"] == "answer" and end["content"] == FINAL_ANSWER and not runs[request_id]
    # The supervisor's: TrustGraph's synthesis over both sub-goals, which reached it through the bridge.
    [end] = responses.ends(supervisor)
    assert end["message_type"] == "answer" and end["content"] == SYNTHESIS.format(count=2) and not runs[supervisor]
    assert services.decomposed == ["Compare the two biggest suppliers"]
    [results] = services.synthesised
    assert sorted(r["goal"] for r in results) == sorted(GOALS)
    said = responses.messages[supervisor]
    if serve_subagent_goals:
        assert all(r["result"].startswith(ANSWER) and "Confidence: " in r["result"] for r in results)
        # The sub-goals' progress reached the supervisor's caller under its id; their answers did not.
        assert any(m["message_type"] == "thought" and m["content"].startswith("Planning how to answer") for m in said)
    else:
        assert all(r["result"] == FINAL_ANSWER for r in results)
    assert not [m for m in said if m["message_type"] == "answer" and m["content"].startswith(ANSWER)]
    assert set(responses.messages) - set(sent) <= {i for i in responses.messages if i.startswith("warm-up-")}

    # The traces, as TrustGraph's own reader reads them from the flow's store: the supervisor's session is listed,
    # its sub-goals' are not (each is derived from its decomposition); each finding is derived from a Conclusion at
    # its sub-goal's `<session>/final`, whichever agent answered it. (The reader follows no sub-goal from the
    # supervisor's trace, and no ReAct sub-agent's past its pattern decision, a type it does not know: TrustGraph's
    # own traces read so too.)
    assert len(sub_sessions) == len(GOALS) and len(findings) == len(GOALS)
    assert supervising in read["listed"] and not set(sub_sessions) & set(read["listed"])
    assert [s["type"] for s in read["traces"][supervising]] == ["Decomposition"]
    assert sorted(findings.values()) == sorted(f"{s}/final" for s in sub_sessions)
    assert set(read["entities"].values()) == {"Conclusion"}
    if serve_subagent_goals:  # this service's sub-goals: its plan, its step and its answer, ending in that Conclusion
        for session in sub_sessions:
            trace = read["traces"][session]
            assert [s["type"] for s in trace] == ["Plan", "StepResult", "Conclusion"], trace
            assert trace[-1]["uri"] == f"{session}/final"


def supervisor_trace(facts: set[tuple[str, str, str]]) -> tuple[str, list[str], dict[str, str]]:
    """The supervisor's session, its sub-goals' sessions (derived from its decomposition) and each finding with the
    node it is derived from, as the triples store holds them."""
    [decomposition] = [s for s, p, o in facts if p == RDF_TYPE and o == TG + "Decomposition"]
    supervising = decomposition.removesuffix("/decompose")
    sub_sessions = sorted(s for s, p, o in facts if p == PROV_DERIVED and o == decomposition)
    finding_uris = {s for s, p, o in facts if p == RDF_TYPE and o == TG + "Finding"}
    findings = {s: o for s, p, o in facts if s in finding_uris and p == PROV_DERIVED}
    return supervising, sub_sessions, findings
