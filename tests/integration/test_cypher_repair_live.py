"""FalkorDB rejects each slip as written and answers the repaired query with the value that was meant."""

from __future__ import annotations

import pytest

from backends.graph_store import GraphQueryError, GraphStore
from cypher.clause_order import repaired
from tests.seeded_graph import seeded_graph


@pytest.fixture
async def library(falkordb_url: str, unique: str):  # type: ignore[no-untyped-def]
    async with seeded_graph(
        falkordb_url,
        f"library-{unique}",
        "CREATE (a:Author {name: 'Ada'}), (b:Author {name: 'Bo'}), "
        "(a)-[:WROTE]->(:Book {title: 'One', pages: 100}), (a)-[:WROTE]->(:Book {title: 'Two', pages: 300}), "
        "(b)-[:WROTE]->(:Book {title: 'Three', pages: 50})",
    ) as name:
        yield name


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("MATCH (a:Author)-[:WROTE]->(b:Book) RETURN count(b) AS n WHERE b.pages > 60", [[2]]),
        ("MATCH (a:Author)-[:WROTE]->(b:Book) RETURN a.name AS author, count(b) AS n WHERE n > 1", [["Ada", 2]]),
        ("MATCH (a:Author)-[:WROTE]->(b:Book) RETURN a.name ORDER BY sum(b.pages) DESC LIMIT 1", [["Ada", 400]]),
        ("MATCH (a:Author {name: 'Bo'}) RETURN a MATCH (a)-[:WROTE]->(b:Book) RETURN b.title", [["Three"]]),
        (
            "MATCH (a:Author)-[:WROTE]->(b:Book) WITH a.name AS author, count(b) AS n ORDER BY n DESC LIMIT 1",
            [["Ada", 2]],
        ),
        ("MATCH (a:Author)-[:WROTE]->(b:Book) WHERE a.name != 'Ada' RETURN b.title", [["Three"]]),
        ("MATCH (a:Author {name: 'Ada'})-[:WROTE]->(b:Book) AND b.pages >= 200 RETURN b.title", [["Two"]]),
    ],
)
async def test_rejected_slips_are_repaired_into_the_query_that_was_meant(
    falkordb_url: str, library: str, query: str, meant: list[list[object]]
) -> None:
    store = GraphStore(falkordb_url, library)
    try:
        with pytest.raises(GraphQueryError):
            await store.ro_query(query)
        fixed = repaired(query)
        assert fixed is not None
        assert (await store.ro_query(fixed)).rows == meant
    finally:
        await store.aclose()


async def test_a_label_written_in_the_wrong_case_or_reversed_hop_is_corrected_against_the_live_schema(
    falkordb_url: str, library: str
) -> None:
    from backends.schema_check import SchemaCheck

    store = GraphStore(falkordb_url, library)
    try:
        query = "MATCH (b:book)-[:WROTE]->(a:Author {name: 'Ada'}) RETURN count(b) AS n"
        assert (await store.ro_query(query)).rows == [[0]]  # runs, and answers wrongly
        fixed = await SchemaCheck(store).corrected(query)
        assert fixed == "MATCH (b:Book)<-[:WROTE]-(a:Author {name: 'Ada'}) RETURN count(b) AS n"
        assert (await store.ro_query(fixed)).rows == [[2]]
    finally:
        await store.aclose()


async def test_a_descending_ranking_names_the_highest_value_not_a_missing_one(falkordb_url: str, unique: str) -> None:
    """FalkorDB sorts null above every value: "which book has the most pages" named a book without pages."""
    from cypher.null_order import ranked_without_nulls

    async with seeded_graph(
        falkordb_url,
        f"pages-{unique}",
        "CREATE (:Book {title: 'Long', pages: 900}), (:Book {title: 'Unknown'}), (:Book {title: 'Short', pages: 20})",
    ) as name:
        store = GraphStore(falkordb_url, name)
        try:
            query = "MATCH (b:Book) RETURN b.title AS book, b.pages AS pages ORDER BY pages DESC LIMIT 1"
            assert (await store.ro_query(query)).rows == [["Unknown", None]]  # as the model wrote it
            fixed = ranked_without_nulls(query)
            assert fixed is not None
            assert (await store.ro_query(fixed)).rows == [["Long", 900]]
        finally:
            await store.aclose()
