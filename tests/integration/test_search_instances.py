"""search_instances on the real demo graph: it finds what the graph calls the things a question names,
scores an empty search low, refuses what cannot work with the reason, offers itself to the planner
where a deployment enables it, and no search term can change the graph."""

from __future__ import annotations

import json
from typing import Any

import pytest
from falkordb.asyncio import FalkorDB

from actions.ontology import Ontology
from contracts.query_path import StepInput
from contracts.run import AgentSettings
from embedded import demo_graph
from planning.plan_parser import parse_plan
from tests.tool_calls import ToolCalls, call, local_backends, results
from tools import registry

ONTOLOGY = Ontology.load(demo_graph.ONTOLOGY_PATH)


def search(**arguments: Any) -> StepInput:
    return call("search_instances", **arguments)


@pytest.fixture
def tools(falkordb_url: str) -> ToolCalls:
    return ToolCalls(local_backends(falkordb_url=falkordb_url, ontology=ONTOLOGY))


async def test_finds_entities_by_any_property_ignoring_case(tools: ToolCalls) -> None:
    out = await tools.search_instances(search(search_term="acme"))
    found = results(out)
    assert [r["name"] for r in found] == ["Acme Industrial"] and found[0]["class"] == "Supplier"
    assert out.confidence.score == 0.9 and "1 matching instances found" in out.confidence.reasoning
    by_id = results(await tools.search_instances(search(search_term="sup-001")))
    assert [r["name"] for r in by_id] == ["Acme Industrial"]


async def test_a_class_narrows_the_search_and_nothing_found_is_weak_evidence(tools: ToolCalls) -> None:
    none = await tools.search_instances(search(search_term="acme", class_name="Product"))
    assert none.success and results(none) == [] and none.confidence.score == 0.3
    assert none.confidence.reasoning == "no matching instances found"


async def test_the_limit_is_enforced(tools: ToolCalls) -> None:
    assert len(results(await tools.search_instances(search(search_term="PO-", limit=3)))) == 3
    assert len(results(await tools.search_instances(search(search_term="PO-", limit=100000)))) == 100


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"search_term": "  "}, "search_term is required"),
        ({"search_term": "x", "class_name": "Supplier) DELETE (n"}, "unknown class"),
        ({"search_term": "x", "limit": "ten"}, "limit must be a whole number"),
    ],
)
async def test_arguments_that_cannot_work_are_refused_with_the_reason(
    tools: ToolCalls, arguments: dict[str, str], reason: str
) -> None:
    out = await tools.search_instances(search(**arguments))
    assert not out.success and out.confidence.score == 0.0 and reason in out.output


async def test_a_hostile_search_term_changes_nothing(tools: ToolCalls, falkordb_url: str) -> None:
    db = FalkorDB.from_url(falkordb_url)
    graph = db.select_graph("procurement")
    count = "MATCH (n) RETURN count(n)"
    before = (await graph.ro_query(count)).result_set[0][0]
    out = await tools.search_instances(search(search_term="x') DETACH DELETE n WITH 1 AS one MATCH (m) RETURN m //"))
    after = (await graph.ro_query(count)).result_set[0][0]
    await db.aclose()
    assert out.success and results(out) == [] and after == before


async def test_offered_to_the_planner_only_where_enabled(falkordb_url: str) -> None:
    backends = local_backends(falkordb_url=falkordb_url, ontology=ONTOLOGY)
    assert "search_instances" not in await registry.catalogue(backends)  # not offered by default (unmeasured)
    enabled = ["GraphQuery", "search_instances"]
    catalogue = await registry.catalogue(backends, enabled)
    assert list(catalogue) == enabled
    registered = registry.activities(backends, enabled)
    assert [getattr(a, "__temporal_activity_definition").name for a in registered] == enabled
    plan = parse_plan(
        json.dumps(
            {
                "steps": [
                    {
                        "id": "s1",
                        "function": "search_instances",
                        "dependencies": [],
                        "arguments": {"search_term": "Acme"},
                    }
                ]
            }
        ),
        plan_id="p",
        tools=catalogue,
        settings=AgentSettings(),
    )
    assert plan.steps[0].confidence_threshold == 0.75  # no default of its own: the run's threshold
    without_ontology = local_backends(falkordb_url=falkordb_url)
    assert "search_instances" not in await registry.catalogue(without_ontology, enabled)
