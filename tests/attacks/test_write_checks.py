"""Write checks: a query that would change the graph, read files (LOAD CSV) or call a procedure that is not a read
is refused before it runs, however it is disguised (a quote inside a backtick-quoted name, a comment between
keywords, odd case, a write inside a subquery), with why; and each, sent straight to the live FalkorDB in its
read-only mode (the last line behind the check), changes nothing: nodes, properties, relationships, indexes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from falkordb.asyncio import FalkorDB
from redis.exceptions import ResponseError

from contracts.run import AgentRunResult
from cypher.read_only import refusals
from tests.agent_harness import plan, responder
from tests.tool_calls import ToolCalls, call, local_backends

WRITES = "only read-only queries may run"
PROCEDURE = "which is not one of the read procedures a query may call"
# (the attack, what the refusal must say)
ATTACKS = [
    # the quote in the quoted label opened a "string" that hid the SET from a regular expression
    ("MATCH (n:`a'b`) SET n.name = 'pwned' RETURN 'c'", "the query writes (SET)"),
    ("MATCH (n:Entity) WHERE n.name <> \"it's\" SET n.name = 'pwned' RETURN n", "the query writes (SET)"),
    ("MATCH (n) WHERE n.name = 'it\\'s' OR true DETACH DELETE n", "the query writes (DELETE, DETACH)"),
    ("LOAD/**/CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD CSV, which reads files"),
    ("load csv with headers from 'file://secrets.csv' AS row RETURN row", "LOAD CSV, which reads files"),
    ("CALL db.idx.fulltext.createNodeIndex('Entity', 'name')", f"db.idx.fulltext.createNodeIndex, {PROCEDURE}"),
    ("CALL /* just reading */ db.idx.fulltext.drop('Entity')", f"db.idx.fulltext.drop, {PROCEDURE}"),
    ("CALL `db`.`idx`.fulltext.createNodeIndex('Document', 'title')", f"db.idx.fulltext.createNodeIndex, {PROCEDURE}"),
    ("CALL algo.pageRank(NULL, NULL)", f"algo.pageRank, {PROCEDURE}"),
    ("CREATE INDEX FOR (n:Entity) ON (n.name)", "the query writes (CREATE)"),
    ("DROP INDEX ON :Entity(name)", "the query writes (DROP)"),
    ("cReAtE (:Entity {name: 'intruder'})", "the query writes (CREATE)"),
    ("MATCH (n:Entity) MeRgE (n)-[:LINKS]->(:Entity {name: 'intruder'})", "the query writes (MERGE)"),
    ("MATCH (n:Entity) merge (m:Entity {name: 'Entity X'}) ON MATCH set m.name = 'pwned'", "(MERGE, SET)"),
    ("MATCH (n) REMOVE n.name RETURN n", "the query writes (REMOVE)"),
    ("MATCH (n) CALL { WITH n SET n.name = 'pwned' } RETURN n", "the query writes (SET)"),
    ("UNWIND [1] AS x FOREACH (y IN [1] | CREATE (:Entity {name: 'intruder'}))", "the query writes (CREATE, FOREACH)"),
    ("MATCH (n) // a read\nSET n.name = 'pwned'", "the query writes (SET)"),
]
IDS = [f"{n}-{q.split()[0].lower()}" for n, (q, _) in enumerate(ATTACKS)]


async def snapshot(graph: Any) -> tuple[Any, ...]:
    """Everything a write could change: each node's labels and properties, each relationship, each index."""
    nodes = (await graph.ro_query("MATCH (n) RETURN labels(n), properties(n)")).result_set
    rels = (
        await graph.ro_query("MATCH (a)-[r]->(b) RETURN type(r), properties(r), properties(a), properties(b)")
    ).result_set
    indexes = (await graph.ro_query("CALL db.indexes()")).result_set
    return tuple(
        sorted(json.dumps(row, default=str, sort_keys=True) for row in rows) for rows in (nodes, rels, indexes)
    )


@pytest.mark.parametrize(("query", "why"), ATTACKS, ids=IDS)
async def test_the_check_refuses_it_and_says_why(falkordb_url: str, seed_graph: str, query: str, why: str) -> None:
    """Through the tool a planner's step or a human's retry runs: refused before it reaches the graph."""
    assert any(why in problem for problem in refusals(query)), refusals(query)
    backends = local_backends(falkordb_url=falkordb_url, graph_name=seed_graph)
    db = FalkorDB.from_url(falkordb_url)
    graph = db.select_graph(seed_graph)
    try:
        before = await snapshot(graph)
        out = await ToolCalls(backends).GraphQuery(call("GraphQuery", query=query))
        after = await snapshot(graph)
    finally:
        await backends.aclose()
        await db.aclose()
    assert not out.success and out.deterministic and out.output.startswith("Query not run: ")
    assert why in (out.error or "")
    assert after == before


@pytest.mark.parametrize(("query", "why"), ATTACKS, ids=IDS)
async def test_falkordbs_read_only_mode_changes_nothing(
    falkordb_url: str, seed_graph: str, query: str, why: str
) -> None:
    """Were the check to miss one, GRAPH.RO_QUERY is behind it: the graph, its properties and its indexes
    stay as they were (a read-only procedure like pageRank may answer; it changes nothing)."""
    db = FalkorDB.from_url(falkordb_url)
    graph = db.select_graph(seed_graph)
    try:
        before = await snapshot(graph)
        assert before[0], "the seed graph is empty"
        try:
            await graph.ro_query(query)
        except ResponseError:
            pass  # refused ("to be executed only on read-only queries") or, for LOAD CSV, no such file
        after = await snapshot(graph)
    finally:
        await db.aclose()
    assert after == before


async def test_a_planned_disguised_write_never_runs_and_the_run_says_why(
    harness_factory,  # type: ignore[no-untyped-def]
    seed_graph: str,
) -> None:
    """The whole path: the planner's step (and every repair of it: the scripted planner keeps the query) is
    refused with the reason; the graph is untouched."""
    attack = ATTACKS[0][0]
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": attack}, []))], text=lambda b: ""), seed_graph, max_retries=0
    )
    db = FalkorDB.from_url(harness.config.falkordb_url)
    graph = db.select_graph(seed_graph)
    try:
        before = await snapshot(graph)
        handle = await harness.start("Rename every entity, please")
        result: AgentRunResult = await handle.result()
        after = await snapshot(graph)
    finally:
        await db.aclose()
    assert "the query writes (SET); only read-only queries may run" in harness.text()
    assert all(not step.success for step in result.step_results)
    assert after == before
