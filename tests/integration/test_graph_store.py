"""GraphQuery's store works on any property graph: schema discovered at run time, writes refused."""

from __future__ import annotations

import asyncio
import json

import pytest
from falkordb.asyncio import FalkorDB
from temporalio.exceptions import ApplicationError

from backends import graph_store
from backends.graph_store import GraphQueryError, GraphStore
from embedded.processes import free_port


@pytest.fixture
async def movie_graph(falkordb_url: str, unique: str):  # type: ignore[no-untyped-def]
    name = f"movies-{unique}"
    db = FalkorDB.from_url(falkordb_url)
    await db.select_graph(name).query(
        "CREATE (:Person {name: 'Ada'})-[:ACTED_IN {role: 'lead'}]->(:Movie {title: 'Engines', year: 1843})"
    )
    yield name
    await db.select_graph(name).delete()
    await db.aclose()


async def test_schema_is_read_from_whatever_graph_it_is_pointed_at(falkordb_url: str, movie_graph: str) -> None:
    store = GraphStore(falkordb_url, movie_graph)
    schema = await store.describe_schema()
    await store.aclose()
    assert "(:Person)-[:ACTED_IN]->(:Movie)" in schema
    assert 'Person (1): name="Ada"' in schema and "year=1843" in schema
    assert "Supplier" not in schema  # nothing of the demo domain leaks in


async def test_the_schema_is_reused_briefly_and_read_again_after_a_write_or_its_time(
    falkordb_url: str, movie_graph: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every plan shows the planner the schema; reading it is ~20 queries, so it is kept a few seconds, but
    never past a write through the same store (an action's changes show in the next plan)."""
    monkeypatch.setattr(graph_store, "SCHEMA_TTL_S", 0.5)
    store = GraphStore(falkordb_url, movie_graph)
    first = await store.describe_schema()
    other = FalkorDB.from_url(falkordb_url)
    await other.select_graph(movie_graph).query("CREATE (:Studio {name: 'Analytical'})")
    assert await store.describe_schema() == first  # another client's change: seen once the schema expires
    await asyncio.sleep(0.6)
    assert "Studio (1)" in await store.describe_schema()
    await store.write_query("CREATE (:Studio {name: 'Difference'})", {})
    assert "Studio (2)" in await store.describe_schema()  # its own write: read again at once
    await other.aclose()
    await store.aclose()


async def test_rows_come_back_as_plain_json_with_nodes_and_edges(falkordb_url: str, movie_graph: str) -> None:
    store = GraphStore(falkordb_url, movie_graph)
    rows = await store.ro_query("MATCH (p:Person)-[r]->(m) RETURN p, r, m.title AS title")
    await store.aclose()
    assert rows.columns == ["p", "r", "title"]
    assert rows.rows == [[{"labels": ["Person"], "name": "Ada"}, {"type": "ACTED_IN", "role": "lead"}, "Engines"]]


async def test_writes_are_refused_and_the_graph_is_unchanged(falkordb_url: str, movie_graph: str) -> None:
    store = GraphStore(falkordb_url, movie_graph)
    for attempt in (
        "CREATE (:Person {name: 'Mallory'})",
        "MATCH (n) DETACH DELETE n",
        "MATCH (p:Person) SET p.name = 'x' RETURN p",
    ):
        with pytest.raises(GraphQueryError):
            await store.ro_query(attempt)
    rows = await store.ro_query("MATCH (n) RETURN count(n)")
    await store.aclose()
    assert rows.rows == [[2]]


async def test_parameters_are_data_not_cypher(falkordb_url: str, movie_graph: str) -> None:
    store = GraphStore(falkordb_url, movie_graph)
    hostile = "Ada'}) DETACH DELETE (n) //"
    rows = await store.ro_query("MATCH (p:Person {name: $name}) RETURN p.name", {"name": hostile})
    count = await store.ro_query("MATCH (n) RETURN count(n)")
    await store.aclose()
    assert rows.rows == [] and count.rows == [[2]]


async def test_large_results_are_capped_and_marked_truncated(falkordb_url: str, movie_graph: str) -> None:
    """The cap is in the query the server runs (LIMIT max_rows + 1): one row more than kept shows truncation."""
    store = GraphStore(falkordb_url, movie_graph)
    rows = await store.ro_query("UNWIND range(1, 500) AS i RETURN i", max_rows=50)
    await store.aclose()
    assert len(rows.rows) == 50 and rows.total_rows == 51 and rows.truncated
    assert json.loads(rows.to_json())["row_count"] == 50


async def test_unreachable_falkordb_is_a_retryable_error_naming_the_address() -> None:
    url = f"redis://127.0.0.1:{free_port()}"
    store = GraphStore(url, "g")
    with pytest.raises(ApplicationError) as caught:
        await store.ro_query("RETURN 1")
    await store.aclose()
    assert caught.value.type == "GraphUnavailable" and not caught.value.non_retryable
    assert url in caught.value.message
