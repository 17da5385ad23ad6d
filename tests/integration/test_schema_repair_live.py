"""The schema-driven repairs against a live graph: the query as a small model writes it is refused (by
FalkorDB or by the schema check), and SchemaCheck.corrected turns it into the query that answers what
was meant."""

from __future__ import annotations

import pytest

from backends.graph_store import GraphStore
from backends.schema_check import SchemaCheck
from tests.seeded_graph import seeded_graph
from tests.tool_calls import local_backends
from tools import registry


@pytest.fixture
async def shelves(falkordb_url: str, unique: str):  # type: ignore[no-untyped-def]
    async with seeded_graph(
        falkordb_url,
        f"shelves-{unique}",
        "CREATE (ada:Author {name: 'Ada'}), (bo:Author {name: 'Bo'}), "
        "(north:Publisher {name: 'North Press'}), (south:Publisher {name: 'South House'}), "
        "(one:Book {title: 'One', pages: 100}), (two:Book {title: 'Two', pages: 300}), "
        "(three:Book {title: 'Three', pages: 50}), "
        "(ada)-[:WROTE]->(one), (ada)-[:WROTE]->(two), (bo)-[:WROTE]->(three), "
        "(one)-[:PUBLISHED_BY]->(north), (two)-[:PUBLISHED_BY]->(south), (three)-[:PUBLISHED_BY]->(north), "
        "(:Review {stars: 5, reviewer: 'Cy'})-[:ABOUT]->(three)",
    ) as name:
        yield name


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        # a neighbour read as a property, one hop and two hops away
        ("MATCH (b:Book {title: 'Two'}) RETURN b.publisher", [["South House"]]),
        ("MATCH (r:Review {stars: 5}) RETURN r.author AS author", [["Bo"]]),
        ("MATCH (b:Book) WHERE b.publisher_name = 'North Press' RETURN b.title ORDER BY b.title", [["One"], ["Three"]]),
        # two labels joined directly that the schema joins through a third
        (
            "MATCH (a:Author {name: 'Ada'})-[r:PUBLISHED_BY]->(p:Publisher) RETURN DISTINCT p.name ORDER BY p.name",
            [["North Press"], ["South House"]],
        ),
        (
            "MATCH (a:Author {name: 'Bo'})-[:PUBLISHED_BY]->(p:Publisher {name: 'North Press'}) "
            "RETURN count(*) AS books",
            [[1]],
        ),
        # both of two such hops (the first bridge's anonymous middle does not stop the second)
        (
            "MATCH (a:Author {name: 'Ada'})-[:PUBLISHED_BY]->(p:Publisher) "
            "MATCH (b:Author {name: 'Bo'})-[:PUBLISHED_BY]->(p:Publisher) RETURN DISTINCT p.name",
            [["North Press"]],
        ),
        # a relationship type the graph does not have, between two labels one type joins
        ("MATCH (a:Author {name: 'Ada'})-[:AUTHORED]->(b:Book) RETURN b.title ORDER BY b.title", [["One"], ["Two"]]),
        # a property read from a node that lacks it, held by the one (unnamed) node that has it
        ("MATCH (p:Publisher {name: 'North Press'})<-[:PUBLISHED_BY]-(:Book) RETURN sum(p.pages) AS pages", [[150]]),
        # a neighbour read after a WITH that passes its node on
        ("MATCH (b:Book {title: 'One'}) WITH b, count(b) AS n RETURN b.publisher AS publisher", [["North Press"]]),
    ],
)
async def test_what_the_schema_can_only_have_meant_is_rewritten_and_answers(
    falkordb_url: str, shelves: str, query: str, meant: list[list[object]]
) -> None:
    store = GraphStore(falkordb_url, shelves)
    check = SchemaCheck(store)
    try:
        assert await check.problems(query)  # refused as written
        fixed = await check.corrected(query)
        assert fixed is not None
        assert await check.problems(fixed) == []
        assert await store.explain_error(fixed) is None
        assert (await store.ro_query(fixed)).rows == meant
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("MATCH (b:Book {title: 'Two'}) RETURN p.pages", [[300]]),
        ("MATCH (b:Book) RETURN b.title ORDER BY pages DESC LIMIT 1", [["Two"]]),
        ("MATCH (a:Author {name: 'Ada'})-[:WROTE]->(:Book) RETURN count(books) AS written", [[2]]),
        # the unnamed node that has what is read, though a named node has it too
        (
            "MATCH (p:Publisher {name: 'North Press'})<-[:PUBLISHED_BY]-(:Book) RETURN b.title ORDER BY b.title",
            [["One"], ["Three"]],
        ),
        # an unbound name with a label in an expression, or spelling one no pattern has: the nodes of that label
        # joined to the bound node (none counts 0)
        (
            "MATCH (a:Author {name: 'Ada'}) RETURN a.name AS author, count(DISTINCT w:Book {author: a}) AS books",
            [["Ada", 2]],
        ),
        ("MATCH (b:Book {title: 'Two'}) RETURN count(DISTINCT reviews) AS n", [[0]]),
        ("MATCH (b:Book {title: 'Three'}) RETURN count(DISTINCT reviews) AS n", [[1]]),
    ],
)
async def test_an_unbound_variable_is_read_as_the_one_bound_node_that_has_the_property(
    falkordb_url: str, shelves: str, query: str, meant: list[list[object]]
) -> None:
    store = GraphStore(falkordb_url, shelves)
    try:
        assert "not defined" in (await store.explain_error(query) or "")
        fixed = await SchemaCheck(store).corrected(query)
        assert fixed is not None
        assert (await store.ro_query(fixed)).rows == meant
    finally:
        await store.aclose()


async def test_a_count_named_after_a_stored_property_reads_the_property(falkordb_url: str, shelves: str) -> None:
    """Runs as written (no problem to find), but counts authors where the graph stores the figure."""
    store = GraphStore(falkordb_url, shelves)
    query = "MATCH (b:Book {title: 'Two'})<-[:WROTE]-(a:Author) RETURN count(a) AS pages"
    try:
        assert (await store.ro_query(query)).rows == [[1]]
        fixed = await SchemaCheck(store).corrected(query)
        assert fixed is not None
        assert (await store.ro_query(fixed)).rows == [[300]]
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    "query",
    [
        # both an Author and a Publisher have a name: which one x is cannot be told
        "MATCH (a:Author)-[:WROTE]->(:Book)-[:PUBLISHED_BY]->(p:Publisher) RETURN x.name",
        "OPTIONAL MATCH (b:Book {title: 'Two'}) RETURN b.publisher",  # a required MATCH would change the rows
        "MATCH (a:Author)-[r:PUBLISHED_BY]->(p:Publisher) RETURN type(r)",  # the relationship is read
    ],
)
async def test_a_query_the_schema_leaves_in_doubt_is_left_for_the_model_to_repair(
    falkordb_url: str, shelves: str, query: str
) -> None:
    store = GraphStore(falkordb_url, shelves)
    try:
        assert await SchemaCheck(store).corrected(query) is None
    finally:
        await store.aclose()


@pytest.fixture
async def ledger(falkordb_url: str, unique: str):  # type: ignore[no-untyped-def]
    async with seeded_graph(
        falkordb_url,
        f"ledger-{unique}",
        "CREATE (o1:Order {status: 'delivered', ref: 'O-1'}), (o2:Order {status: 'approved', ref: 'O-2'}), "
        "(:Invoice {status: 'open', number: 'I-1'})-[:BILLS]->(o1), "
        "(:Invoice {status: 'paid', number: 'I-2'})-[:BILLS]->(o1), "
        "(:Invoice {status: 'open', number: 'I-3'})-[:BILLS]->(o2), "
        "(:Supplier {status: 'open', name: 'S'})",
    ) as name:
        yield name


async def test_a_value_compared_on_a_node_that_never_stores_it_moves_to_the_one_that_does(
    falkordb_url: str, ledger: str
) -> None:
    """ "How many invoices are still open" written with the order's status: only invoices are 'open'."""
    from backends.grounding import compared_where_held

    store = GraphStore(falkordb_url, ledger)
    try:
        query = (
            "MATCH (i:Invoice)-[:BILLS]->(o:Order) WHERE o.status = 'open' AND o.ref <> 'O-9' "
            "RETURN count(i) AS open_invoices"
        )
        assert (await store.ro_query(query)).rows == [[0]]
        fixed = await compared_where_held(query, store)
        assert fixed == query.replace("o.status = 'open'", "i.status = 'open'")
        assert (await store.ro_query(fixed)).rows == [[2]]
        # a value stored where it is compared, or by no node of the query, stays as written
        assert await compared_where_held("MATCH (i:Invoice) WHERE i.status = 'open' RETURN count(i)", store) is None
        assert (
            await compared_where_held(
                "MATCH (i:Invoice)-[:BILLS]->(o:Order) WHERE o.status = 'lost' RETURN count(i)", store
            )
            is None
        )
    finally:
        await store.aclose()


async def test_an_sql_subquery_is_refused_with_the_cypher_pattern_to_write_instead(
    falkordb_url: str, shelves: str
) -> None:
    backends = local_backends(falkordb_url=falkordb_url, graph_name=shelves)
    try:
        query = (
            "MATCH (a:Author)-[:WROTE]->(:Book) WHERE a.name IN "
            "(SELECT name FROM Publisher WHERE name = 'North Press') RETURN a.name"
        )
        graph_query = registry.tool("GraphQuery")
        assert graph_query is not None
        problems = await graph_query.check({"query": query}, backends)
        assert len(problems) == 1 and problems[0].startswith("FalkorDB rejects the query: ")
        assert problems[0].endswith("e.g. MATCH (:Book)-[:PUBLISHED_BY]->(:Publisher {name: 'North Press'})")
    finally:
        for closer in backends.closers:
            await closer.aclose()


async def test_a_date_stored_as_text_is_compared_as_a_date(falkordb_url: str, unique: str) -> None:
    """FalkorDB answers `'2024-06-28' < date()` with null: "overdue" over ISO text would find nothing."""
    from backends.grounding import dates_read_as_dates

    async with seeded_graph(
        falkordb_url,
        f"dues-{unique}",
        "CREATE (:Bill {ref: 'B-1', due: '2001-02-03'}), (:Bill {ref: 'B-2', due: '2999-01-01'}), "
        "(:Bill {ref: 'B-3', due: '2002-03-04T10:00:00'}), (:Bill {ref: 'B-4'}), "
        "(:Ticket {ref: 'T-1', due: 'soon'})",
    ) as name:
        store = GraphStore(falkordb_url, name)
        try:
            query = "MATCH (b:Bill) WHERE b.due < date() RETURN b.ref ORDER BY b.ref"
            assert (await store.ro_query(query)).rows == []
            fixed = await dates_read_as_dates(query, store)
            assert fixed == "MATCH (b:Bill) WHERE date(b.due) < date() RETURN b.ref ORDER BY b.ref"
            assert (await store.ro_query(fixed)).rows == [["B-1"], ["B-3"]]
            # the call first, with a month's arithmetic on the other side
            reversed_query = (
                "MATCH (b:Bill) WHERE date() > b.due AND b.due > date() - duration({years: 100}) RETURN b.ref"
            )
            assert await dates_read_as_dates(reversed_query, store) == (
                "MATCH (b:Bill) WHERE date() > date(b.due) AND date(b.due) > date() - duration({years: 100}) "
                "RETURN b.ref"
            )
            # text that is not a date, and a string compared as a string, stay as written
            assert await dates_read_as_dates("MATCH (t:Ticket) WHERE t.due < date() RETURN t.ref", store) is None
            assert (
                await dates_read_as_dates("MATCH (b:Bill) WHERE b.due < toString(date()) RETURN b.ref", store) is None
            )
        finally:
            await store.aclose()


async def test_a_variable_read_but_never_matched_is_matched_as_the_neighbour_it_must_be(
    falkordb_url: str, shelves: str
) -> None:
    """Books join authors and publishers, both named: `p` starts like Publisher."""
    store = GraphStore(falkordb_url, shelves)
    try:
        query = "MATCH (b:Book) WHERE b.pages > 80 RETURN b.title AS book, p.name AS publisher ORDER BY pages"
        assert await store.explain_error(query) == "'p' not defined"
        fixed = await SchemaCheck(store).corrected(query)
        assert fixed is not None and await store.explain_error(fixed) is None
        assert (await store.ro_query(fixed)).rows == [["One", "North Press"], ["Two", "South House"]]
    finally:
        await store.aclose()
