"""Explainability in TrustGraph's own form, read with TrustGraph's own code (trustgraph-base 2.11.1): its Pulsar
client decodes the explain messages into its `AgentResponse`/`Triple`/`Term` dataclasses, its gateway translator
and socket client turn them into the entities `tg-invoke-agent -x` prints (Question, Plan, StepResult,
Synthesis), and the flow's triples store gets every triple as TrustGraph `Triples` messages: the caller's
messages carry each entity's core, the store the whole of it. Beyond TrustGraph: every confidence figure names
the evidence behind it. (The `explain` setting, and each write made once: test_explain_setting.py.)"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import pulsar
import trustgraph

# trustgraph.api's package init imports aiohttp for its async client, which is not installed here: its modules
# (TrustGraph's own code, unchanged) are loaded without that init.
if "trustgraph.api" not in sys.modules:
    _api = types.ModuleType("trustgraph.api")
    _api.__path__ = [str(Path(trustgraph.__path__[0]) / "api")]
    sys.modules["trustgraph.api"] = _api

from trustgraph.api.explainability import Conclusion, Plan, Question, StepResult, Synthesis
from trustgraph.api.socket_client import SocketClient
from trustgraph.base.serialization import dict_to_dataclass
from trustgraph.messaging.translators.agent import AgentResponseTranslator
from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import AgentResponse as TgAgentResponse
from trustgraph.schema import Triple as TgTriple
from trustgraph.schema import Triples as TgTriples

from contracts.topics import queue_topic
from service.connections import pulsar_client
from tests.contract.test_trustgraph_contract import (
    ANSWER,
    WAITING_QUESTION,
    answers,
    tg_agent,  # noqa: F401 (a fixture)
)
from tests.scripted_llm import ScriptedLLM

TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
TGCA = "urn:tgca:ns:"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
QUESTION = "Which supplier has the most purchase orders?"


async def dialog(agent, question: str, **request: Any) -> list[TgAgentResponse]:  # type: ignore[no-untyped-def]
    """Every response to one request, as TrustGraph's client decodes them, until the end of the dialog."""
    seen = []
    async for response in agent._rr_client.request_stream(TgAgentRequest(question=question, **request), timeout=60):
        seen.append(response)
        if response.end_of_dialog:
            return seen
    raise AssertionError("no end of dialog")


def entity(response: TgAgentResponse) -> Any:
    """What `tg-invoke-agent -x` shows for an explain message: the gateway's JSON, parsed by the socket client."""
    wire = AgentResponseTranslator().encode(response)
    event = SocketClient._build_provenance_event(object.__new__(SocketClient), wire)
    assert event.explain_id == response.explain_id and event.explain_graph == "urn:graph:retrieval"
    return event.entity


def spo(triples: list[TgTriple]) -> set[tuple[str, str, str]]:
    return {(t.s.iri, t.p.iri, t.o.iri if t.o.type == "i" else t.o.value) for t in triples}


def objects(facts: set[tuple[str, str, str]], s: str, p: str) -> list[str]:
    return sorted(o for s2, p2, o in facts if s2 == s and p2 == p)


def confidence_of(facts: set[tuple[str, str, str]], owner: str) -> tuple[float, dict[str, str]]:
    """An owner's confidence score and the evidence it names (feature -> value), asserting it names some."""
    [node] = objects(facts, owner, TGCA + "confidence")
    assert (node, RDF_TYPE, TGCA + "Confidence") in facts
    [score] = objects(facts, node, TGCA + "score")
    evidence = {
        objects(facts, e, TGCA + "feature")[0]: objects(facts, e, TGCA + "value")[0]
        for e in objects(facts, node, TGCA + "evidence")
    }
    assert evidence, f"{node} names no evidence"
    assert objects(facts, node, TGCA + "reasoning"), f"{node} states no reasoning"
    return float(score), evidence


async def waiting_run(stack) -> Any:  # type: ignore[no-untyped-def]
    """The handle of this test's run once it waits for a human (TrustGraph's client chose its request id)."""
    query = f"TaskQueue = '{stack.config.queues.workflow}' AND ExecutionStatus = 'Running'"
    for _ in range(150):
        async for run in stack.client.list_workflows(query):
            handle = stack.client.get_workflow_handle(run.id)
            if (await handle.query("status")).get("pending_override"):
                return handle
        await asyncio.sleep(0.2)
    raise TimeoutError("the run never asked for an override")


async def read_store(consumer, until: int) -> list[TgTriples]:  # type: ignore[no-untyped-def]
    stored: list[TgTriples] = []
    while len(stored) < until:
        message = await asyncio.wait_for(consumer.receive(), 30)
        await consumer.acknowledge(message)
        stored.append(dict_to_dataclass(json.loads(message.data()), TgTriples))
    return stored


async def store_reader(stack):  # type: ignore[no-untyped-def]
    """(a Pulsar client, a consumer of the stack's flow's triples store from now on)."""
    client = pulsar_client(stack.config.pulsar_url)
    topic = queue_topic("flow", "triples-store", stack.config.workspace, stack.config.flow)
    return client, await client.subscribe(
        topic, f"store-{uuid.uuid4().hex[:8]}", initial_position=pulsar.InitialPosition.Latest
    )


EXPLAINED_CALIBRATOR = Path(__file__).with_name("explained_calibrator.json")


async def test_a_run_explains_itself_as_trustgraphs_agent_does(make_stack, tg_agent) -> None:  # noqa: F811
    with ScriptedLLM(answers) as llm:
        # a fixed calibrator whose weights move this answer (the shipped one's change with each refit)
        stack = await make_stack(llm.base_url, service={"calibrator_path": str(EXPLAINED_CALIBRATOR)})
        client, store = await store_reader(stack)
        try:
            agent = await tg_agent(stack)
            responses = await dialog(agent, QUESTION, collection="acme")
            explains = [r for r in responses if r.message_type == "explain"]
            stored = await read_store(store, len(explains))
        finally:
            await client.close()

    # TrustGraph's shape: explain messages before the end of the dialog (end_of_message false, as its agent
    # leaves it), the answer's just before the answer; triples in its dataclasses and graph
    assert responses[-1].message_type == "answer" and responses[-1].content.startswith(ANSWER)
    assert responses[-2] is explains[-1]
    assert all(not r.end_of_dialog and not r.end_of_message and r.content == "" for r in explains)
    assert all(isinstance(t, TgTriple) and t.g == "urn:graph:retrieval" for r in explains for t in r.explain_triples)
    kinds = [type(entity(r)) for r in explains]
    assert kinds == [Question, Plan, StepResult, Synthesis]
    session, plan, step, synthesis = (r.explain_id for r in explains)
    question = entity(explains[0])
    assert question.query == QUESTION and question.question_type == "agent" and question.timestamp
    assert session.startswith("urn:trustgraph:agent:") and plan == f"{session}/plan"
    assert "GraphQuery" in entity(explains[1]).steps[0]

    # PROV-O in the caller's core: question <- plan <- step <- answer, and each confidence figure
    core = set().union(*(spo(r.explain_triples) for r in explains))
    assert (plan, PROV + "wasDerivedFrom", session) in core
    assert (step, PROV + "wasDerivedFrom", plan) in core
    assert (synthesis, PROV + "wasDerivedFrom", step) in core
    assert objects(core, synthesis, TG + "terminationReason") == ["plan-complete"]
    observed = next(r.content for r in responses if r.message_type == "observation" and " the threshold " in r.content)
    [step_score] = objects(core, f"{step}/confidence", TGCA + "score")
    assert f"Confidence {float(step_score):.2f}" in observed
    stated = float(re.search(r"Confidence: (\d\.\d\d)", responses[-1].content).group(1))  # type: ignore[union-attr]
    [answer_score] = objects(core, f"{synthesis}/confidence", TGCA + "score")
    assert round(float(answer_score), 2) == stated
    # ... with the evidence that moved the answer's, as the answer says it did
    reasons = responses[-1].content.split("calibrated: ", 1)[1]
    moved = {o for s, p, o in core if p == TGCA + "effect"}
    raised, _, lowered = reasons.partition("lowered because")
    assert moved and all(("raised because" in raised) if e == "raised" else bool(lowered) for e in moved)

    # the flow's triples store gets all of it, as TrustGraph `Triples` of the request's collection: each entity's
    # core and its detail, the step generated by its tool call, every figure with every fact behind it
    assert [t.metadata.id for t in stored] == [session, plan, step, synthesis]
    assert all(t.metadata.collection == "acme" for t in stored)
    assert all(spo(r.explain_triples) < spo(t.triples) for r, t in zip(explains[1:], stored[1:], strict=True))
    assert spo(explains[0].explain_triples) <= spo(stored[0].triples)
    facts = set().union(*(spo(t.triples) for t in stored))
    [attempt] = objects(facts, step, PROV + "wasGeneratedBy")
    assert (attempt, RDF_TYPE, PROV + "Activity") in facts and objects(facts, attempt, TG + "action") == ["GraphQuery"]
    assert "rows" in confidence_of(facts, step)[1]
    confidence_of(facts, attempt)
    assert "coverage" in confidence_of(facts, synthesis)[1]
    assert sum(len(r.explain_triples) for r in explains) * 3 < sum(len(t.triples) for t in stored)


async def test_a_streamed_answer_s_explain_message_follows_its_last_chunk(make_stack, tg_agent) -> None:  # noqa: F811
    """As TrustGraph's agent streams an answer: every chunk (here the first sentence sent as the model wrote it,
    then the rest), then the answer's explain message, then the empty answer that ends the dialog."""
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        responses = await dialog(agent, QUESTION, streaming=True)
    *chunks, final = [r for r in responses if r.message_type == "answer"]
    assert len(chunks) >= 2 and "".join(c.content for c in chunks).startswith(ANSWER)
    assert chunks[0].content == ANSWER.split(" It is")[0]  # released alone: as written, not cut once checked
    assert final.end_of_dialog and final.content == ""
    synthesis = responses[-2]
    assert synthesis.message_type == "explain" and isinstance(entity(synthesis), Synthesis)
    assert synthesis.explain_id == final.message_id
    assert responses.index(chunks[-1]) == len(responses) - 3  # after the last chunk


async def test_retries_and_a_human_decision_are_in_the_stored_trace(make_stack, tg_agent) -> None:  # noqa: F811
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, max_retries=1)
        client, store = await store_reader(stack)
        try:
            agent = await tg_agent(stack)
            running = asyncio.create_task(dialog(agent, WAITING_QUESTION))
            handle = await waiting_run(stack)
            # while the run waits for a human, what it explained so far is in the store already
            waiting = await read_store(store, 2)
            await handle.execute_update(
                "submit_override", {"step_id": "s1", "decision": "accept", "by": "dana", "reason": "checked by hand"}
            )
            responses = await running
            explains = [r for r in responses if r.message_type == "explain"]
            stored = waiting + await read_store(store, len(explains) - 2)
        finally:
            await client.close()
    assert [t.metadata.id for t in waiting] == [r.explain_id for r in explains[:2]]  # the question, the plan

    facts = set().union(*(spo(t.triples) for t in stored))
    step = next(r.explain_id for r in explains if isinstance(entity(r), StepResult))
    assert not objects(
        spo(next(r for r in explains if r.explain_id == step).explain_triples), step, TGCA + "attempt"
    )  # the caller gets the step's core; its attempts are stored
    attempts = objects(facts, step, TGCA + "attempt")
    assert len(attempts) == 2
    first, second = sorted(attempts)
    assert objects(facts, first, TGCA + "rung") == ["initial"] and objects(facts, second, TGCA + "rung") != ["initial"]
    assert (second, PROV + "wasInformedBy", first) in facts
    for attempt in attempts:
        confidence_of(facts, attempt)
    [decision] = objects(facts, step, TGCA + "decision")
    assert objects(facts, decision, TGCA + "decision") == ["accept"]
    assert objects(facts, decision, TGCA + "decidedBy") == ["dana"]
    assert objects(facts, decision, TGCA + "reason") == ["checked by hand"]
    assert objects(facts, step, TGCA + "outcome") == ["accepted_by_override"]
    assert confidence_of(facts, step)[1]
    assert responses[-1].message_type == "answer"


async def test_a_failed_run_ends_its_trace_with_an_error_conclusion(make_stack, tg_agent) -> None:  # noqa: F811
    bad = json.dumps({"steps": [{"id": "s1", "function": "Teleport", "arguments": {}, "dependencies": []}]})
    with ScriptedLLM(lambda body: (200, bad)) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        responses = []
        async for response in agent._rr_client.request_stream(TgAgentRequest(question="Teleport me"), timeout=60):
            responses.append(response)
            if response.end_of_dialog or response.message_type == "error":
                break
    explains = [r for r in responses if r.message_type == "explain"]
    assert [type(entity(r)) for r in explains] == [Question, Conclusion]
    facts = spo(explains[-1].explain_triples)
    final = explains[-1].explain_id
    assert (final, RDF_TYPE, TG + "Error") in facts and objects(facts, final, TG + "terminationReason") == ["error"]
    assert (final, PROV + "wasDerivedFrom", explains[0].explain_id) in facts
    assert responses[-1].message_type == "error"
