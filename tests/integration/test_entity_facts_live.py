"""Grounding describes the entities a question names as the live graph stores them, so a small planner can
see which property ("inhabitants" -> population) or which relationship, in which direction, holds the
answer; a name several stored values contain is not described (it would describe the wrong thing)."""

from __future__ import annotations

import pytest
from falkordb.asyncio import FalkorDB

from backends.graph_store import GraphStore
from backends.grounding import ground, misplaced_names
from questions.named_terms import describe_grounding
from tests.seeded_graph import seeded_graph


@pytest.fixture
async def atlas(falkordb_url: str, unique: str):  # type: ignore[no-untyped-def]
    async with seeded_graph(
        falkordb_url,
        f"atlas-{unique}",
        "CREATE (m:Land {name: 'Montavia', population: 621873, motto: 'Onward'}), "
        "(a:Land {name: 'Albor'}), (c:Land {name: 'Corvia'}), (s:Area {name: 'South Reach'}), "
        "(m)-[:NEXT_TO]->(a), (a)-[:NEXT_TO]->(m), (m)-[:NEXT_TO]->(c), (m)-[:LIES_IN]->(s), "
        "(:ActionRecord {key: 'Montavia'})-[:TOUCHED]->(m), "
        "(:Shire {name: 'Oak Vale'})<-[:HAS_SHIRE]-(m), (:Shire {name: 'Oak Hill'})<-[:HAS_SHIRE]-(m), "
        "(:Shire {name: 'Oak Ford'})<-[:HAS_SHIRE]-(m), (:Shire {name: 'Oak Moor'})<-[:HAS_SHIRE]-(m)",
    ) as name:
        graph = GraphStore(falkordb_url, name)
        yield graph
        await graph.aclose()


async def test_a_named_entity_is_described_with_its_properties_and_neighbours(atlas: GraphStore) -> None:
    grounding = await ground("How many inhabitants does Montavia have?", atlas)
    assert len(grounding.facts) == 1
    facts = grounding.facts[0]
    assert "(Land 'Montavia') has " in facts and "population = 621873" in facts and "motto = 'Onward'" in facts
    lines = facts.splitlines()
    assert "  (Land 'Montavia')-[:NEXT_TO]->(:Land) 2 nodes: " in "\n".join(lines)
    assert any(line.startswith("  (Land 'Montavia')<-[:NEXT_TO]-(:Land) 1 node: 'Albor'") for line in lines)
    assert any(line.startswith("  (Land 'Montavia')-[:LIES_IN]->(:Area) 1 node: 'South Reach'") for line in lines)
    shires = next(line for line in lines if "HAS_SHIRE" in line)
    assert "(:Shire) 4 nodes: " in shires and shires.endswith(", ...")  # the count is all of them, names a few
    assert "ActionRecord" not in facts and "TOUCHED" not in facts  # the agent's own bookkeeping stays out
    assert facts in describe_grounding(grounding)


async def test_a_name_several_values_contain_is_not_described(atlas: GraphStore) -> None:
    grounding = await ground("Which land holds Oak?", atlas)
    assert len(grounding.matches) >= 3 and grounding.facts == []
    assert (await ground("What lies next to Zyxwv?", atlas)).facts == []


async def test_a_query_looking_a_name_up_where_it_is_not_stored_is_refused_with_where_it_is(atlas: GraphStore) -> None:
    grounding = await ground("Which lands lie in South Reach?", atlas)
    wrong = "MATCH (l:Land)-[:LIES_IN]->(a:Land) WHERE a.name = 'South Reach' RETURN l.name"
    assert await misplaced_names(wrong, grounding, atlas) == [
        "no Land has name = 'South Reach'; the graph stores 'South Reach' as Area.name: match it there "
        "(with that label, and the relationships the schema gives that label)"
    ]
    inline = "MATCH (l:Land)-[:LIES_IN]->(:Land {name: 'South Reach'}) RETURN l.name"
    assert len(await misplaced_names(inline, grounding, atlas)) == 1
    right = "MATCH (l:Land)-[:LIES_IN]->(a:Area {name: 'South Reach'}) RETURN l.name"
    assert await misplaced_names(right, grounding, atlas) == []


async def test_a_name_stored_in_two_places_may_be_looked_up_in_either(atlas: GraphStore) -> None:
    db = FalkorDB.from_url(atlas.url)
    await db.select_graph(atlas.graph_name).query("CREATE (:Area {name: 'Albor'})")
    await db.aclose()
    grounding = await ground("What lies next to Albor?", atlas)
    for label in ("Land", "Area"):
        assert await misplaced_names(f"MATCH (x:{label} {{name: 'Albor'}}) RETURN x.name", grounding, atlas) == []
