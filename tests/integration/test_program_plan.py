"""A graph question's plan proposed by code, not written (`graph_programs`, activities/planning.py): the
planning activity on a real FalkorDB graph, with the (scripted) model reached through the real client. Code's
best program becomes the plan's one graph query and no model call is made; when the question names something the
graph holds nowhere, names nothing the graph has, or with the setting off, the planner writes the plan."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest_asyncio

from activities.planning import PlanningActivities
from contracts.query_path import PlanningInput, PlanningOutput
from contracts.run import AgentSettings
from tests.integration.test_program_chooser import GRAPH
from tests.scripted_llm import ScriptedLLM, is_planning, is_program_choice
from tests.seeded_graph import seeded_graph
from tests.tool_calls import local_backends

WRITTEN = "MATCH (p:Person {name: 'Ann'})-[:KNOWS]->(q:Person) RETURN q.name AS name"
PLAN = json.dumps(
    {"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": WRITTEN}}]}
)


@pytest_asyncio.fixture
async def graph_name(falkordb_url: str, unique: str) -> AsyncIterator[str]:
    async with seeded_graph(falkordb_url, f"program-plan-{unique}", GRAPH) as name:
        yield name


def model(program: int) -> Any:
    """Chooses `program` (0: none) when shown programs; writes PLAN when asked for a plan."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_program_choice(body):
            return 200, json.dumps({"reading": "from Ann, follow KNOWS twice", "program": program})
        if is_planning(body):
            return 200, PLAN
        return 200, "noted"

    return respond


async def planned(
    falkordb_url: str, graph_name: str, question: str, program: int, on: bool = True
) -> tuple[PlanningOutput, ScriptedLLM]:
    with ScriptedLLM(model(program)) as llm:
        backends = replace(
            local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url, graph_name=graph_name),
            graph_programs=on,
        )
        try:
            out = await PlanningActivities(backends).plan(
                PlanningInput(question=question, plan_id=uuid.uuid4().hex, settings=AgentSettings())
            )
        finally:
            await backends.aclose()
    return out, llm


def query_of(out: PlanningOutput) -> str:
    assert out.plan is not None and len(out.plan.steps) == 1
    return str(out.plan.steps[0].arguments["query"])


async def test_codes_best_program_is_the_plan(falkordb_url: str, graph_name: str) -> None:
    out, llm = await planned(falkordb_url, graph_name, "Who do the people Ann knows know?", 1)
    query = query_of(out)
    assert "[:`KNOWS`]->(x1:`Person`)-[:`KNOWS`]->" in query and "RETURN DISTINCT" in query
    assert llm.requests == []  # no plan written, no model call at all
    assert out.plan is not None and out.plan.steps[0].confidence_threshold == 0.0  # its rows are the answer
    # how clearly it led the next program is evidence for the calibrator; a written plan has none
    assert 0.0 <= out.program_evidence["program_margin"] <= 1.0
    assert out.unused == [] and out.program_evidence["unused_words"] == 0.0  # it walks what the words say


async def test_the_words_codes_program_does_not_use_are_kept(falkordb_url: str, graph_name: str) -> None:
    # No region has a population: the best program reads Ashby's own, and "region" says it answers another question.
    out, _ = await planned(falkordb_url, graph_name, "What is the population of the region Ashby is in?", 1)
    assert "a.`population`" in query_of(out) and "Region" not in query_of(out)
    assert out.unused == ["region"] and out.program_evidence["unused_words"] == 1.0


async def test_the_planner_writes_the_plan_otherwise(falkordb_url: str, graph_name: str) -> None:
    unrelated, llm = await planned(falkordb_url, graph_name, "Write a short poem about the sea.", 0)
    assert query_of(unrelated) == WRITTEN and any(is_planning(r) for r in llm.requests)  # names nothing here
    nowhere, llm = await planned(falkordb_url, graph_name, "Who does Zebediah Quorrington know?", 1)
    assert nowhere.grounding.unmatched  # a name found nowhere: its absence is the answer to establish
    assert any(is_planning(r) for r in llm.requests)
    off, llm = await planned(falkordb_url, graph_name, "Who do the people Ann knows know?", 1, on=False)
    assert query_of(off) == WRITTEN and off.program_evidence == {}
