"""The router's ANSWER (general knowledge, no tools) is overruled when the question names something the
graph holds as an entity's own name or id: a direct answer about it would be made up. The router's model
is scripted (through the real client); the graph is a real FalkorDB graph."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from actions.ontology import Ontology
from activities.action_planning import ActionPlanningActivities
from backends.graph_store import GraphStore
from backends.llm import LLMClient
from contracts.routing import Intent, RouteInput
from embedded.demo_graph import ONTOLOGY_PATH
from service.prompts import PromptTemplates
from tests.scripted_llm import ScriptedLLM, is_routing
from tests.seeded_graph import seeded_graph


def always_answer(body: dict[str, Any]) -> tuple[int, str]:
    assert is_routing(body)
    return 200, json.dumps({"intent": "ANSWER"})


@pytest.fixture
async def library(falkordb_url: str, unique: str) -> AsyncIterator[GraphStore]:
    create = "CREATE (:Loan {loan_id: 'LN-7781', channel: 'kiosk'}), (:Member {name: 'Ana Lima'})"
    async with seeded_graph(falkordb_url, f"library-{unique}", create) as name:
        graph = GraphStore(falkordb_url, name)
        yield graph
        await graph.aclose()


async def test_a_question_naming_a_stored_entity_goes_to_the_graph_whatever_the_router_said(
    library: GraphStore,
) -> None:
    with ScriptedLLM(always_answer) as llm_server:
        llm = LLMClient(llm_server.base_url, "scripted")
        router = ActionPlanningActivities(llm, Ontology.load(ONTOLOGY_PATH), PromptTemplates.load(), library)
        try:
            routed = await router.route(RouteInput(question="Through which channel was loan LN-7781 taken out?"))
            assert routed.intent is Intent.QUERY
            assert "'LN-7781'" in routed.reasoning and "graph holds" in routed.reasoning
            # Nothing the graph holds is named: the router's ANSWER stands.
            greeting = await router.route(RouteInput(question="Hello! What can you do for me?"))
            assert greeting.intent is Intent.ANSWER
            # Without a graph (TrustGraph's), nothing can overrule it.
            graphless = ActionPlanningActivities(llm, Ontology.load(ONTOLOGY_PATH), PromptTemplates.load())
            unchecked = await graphless.route(RouteInput(question="Which channel did LN-7781 use?"))
            assert unchecked.intent is Intent.ANSWER
        finally:
            await llm.aclose()
