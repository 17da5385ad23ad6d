"""A KnowledgeQuery step's graph-rag session in the run's trace, as TrustGraph 2.11.1's agent puts it there
(agent/react/tools.py KnowledgeQueryImpl, orchestrator/plan_pattern.py): graph-rag is asked with the step's result
as `parent_uri`, links its own trace's question under it and stores that trace itself; its explain messages reach
the caller, through TrustGraph's own client, between the step's attempt and its result. TrustGraph's trace reader,
over the flow's triples store, shows the RAG session under the step (tests/trustgraph_trace_reader.py). graph-rag
is scripted in TrustGraph's schema with TrustGraph's own provenance functions (scripted_trustgraph.py)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pulsar
from trustgraph.schema import AgentRequest as TgAgentRequest

from contracts.explain import PROV_DERIVED
from contracts.topics import explainability_topic
from service.connections import pulsar_client
from tests.contract.test_trustgraph_agent_config import QUESTION, knowledge_plan, trustgraph  # noqa: F401
from tests.contract.test_trustgraph_config import ConfigService, config_service  # noqa: F401 (a fixture)
from tests.contract.test_trustgraph_contract import tg_agent  # noqa: F401 (a fixture)
from tests.contract.test_trustgraph_request_fields import dialog
from tests.trustgraph_trace_reader import read_traces


async def stored(pulsar_url: str, topic: str, until: str, within_s: float = 30) -> list[dict[str, Any]]:
    """Every Triples message the flow's triples store was sent, once the entity `until` is among them."""
    client = pulsar_client(pulsar_url)
    written: list[dict[str, Any]] = []
    try:
        consumer = await client.subscribe(
            topic, f"store-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Earliest
        )
        while not any(m["metadata"]["id"] == until for m in written):
            message = await asyncio.wait_for(consumer.receive(), within_s)
            await consumer.acknowledge(message)
            written.append(json.loads(message.data()))
    finally:
        await client.close()
    return written


async def test_a_knowledge_query_s_graph_rag_session_is_forwarded_and_linked_under_its_step(
    trustgraph,  # noqa: F811
    tg_agent,  # noqa: F811
) -> None:
    stack, services = await trustgraph(knowledge_plan(), {})
    responses = await dialog(await tg_agent(stack), TgAgentRequest(question=QUESTION))
    assert responses[-1].message_type == "answer", [r.content for r in responses]
    explained = [r for r in responses if r.message_type == "explain"]
    session = explained[0].explain_id
    step, answer = f"{session}/step/0", f"{session}/synthesis"
    written = await stored(stack.config.pulsar_url, explainability_topic(stack.config.response_topic), answer)
    read = await read_traces(written, [session])

    # graph-rag was asked as TrustGraph's agent asks it: under the step's result
    [asked] = services.seen["graph-rag"]
    assert asked.parent_uri == step
    [rag] = services.rag_traces
    rag_session = rag.rsplit(":", 1)[1]

    # the caller got graph-rag's trace, as it came, after the plan and before the step's result
    assert [r.explain_id for r in explained] == [
        session,
        f"{session}/plan",
        rag,
        f"urn:trustgraph:prov:grounding:{rag_session}",
        f"urn:trustgraph:prov:exploration:{rag_session}",
        f"urn:trustgraph:prov:focus:{rag_session}",
        f"urn:trustgraph:prov:synthesis:{rag_session}",
        step,
        answer,
    ]
    question = explained[2]
    assert any(t.p.iri == PROV_DERIVED and t.o.iri == step for t in question.explain_triples)

    # TrustGraph's reader shows the RAG session under the step, once, then the answer
    assert read["traces"][session] == [
        {"type": "Plan", "uri": f"{session}/plan"},
        {"type": "StepResult", "uri": step},
        {"type": "sub-trace", "question": rag, "synthesis": f"urn:trustgraph:prov:synthesis:{rag_session}"},
        {"type": "Synthesis", "uri": answer},
    ]
    assert rag not in read["listed"]  # a sub-trace, not a session of its own
