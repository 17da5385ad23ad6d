"""A `$` in a name hid a write from the read-only check and a RETURN from the row cap. FalkorDB reads `x$` as one
name (a name's characters are `[A-Za-z0-9_$]`); the check took the `$` for a parameter's and the keyword after
it for the parameter's name. Each attack is now refused with why, through the tool a planner's step or a human's
retry runs, before it reaches the graph: the scratch graph stays as it was and the LOAD CSV URL is never fetched.
Run unchecked with GRAPH.QUERY, each does what it was written for, so the check is what keeps it out (and for
LOAD CSV nothing else does: FalkorDB fetches an https URL under GRAPH.RO_QUERY too)."""

from __future__ import annotations

import pytest

from cypher.read_only import refusals
from cypher.row_cap import capped_rows
from tests.attacks.scratch_graph import FetchListener, ScratchGraph
from tests.tool_calls import ToolCalls, call, local_backends

PROCEDURE = "which is not one of the read procedures a query may call"
URL = "{url}"  # the listener's: FalkorDB would fetch it
# (the attack, what the refusal must say, whether FalkorDB runs it as written)
ATTACKS = [
    ("UNWIND [1] AS x$ CREATE (:Pwned)", "the query writes (CREATE)", True),
    # as written FalkorDB rejects it (`n` is out of scope after WITH n AS x$); the line after is the one it runs
    ("MATCH (n) WITH n AS x$ SET n.pwned = 1 RETURN 1", "the query writes (SET)", False),
    ("MATCH (n) WITH n AS x$ SET x$.pwned = 1 RETURN 1", "the query writes (SET)", True),
    ("UNWIND [1] AS x$ CALL db.idx.fulltext.drop('Person') RETURN 1", f"db.idx.fulltext.drop, {PROCEDURE}", True),
    (f"UNWIND [1] AS x$ LOAD CSV FROM '{URL}' AS row RETURN row", "LOAD CSV, which reads files", True),
]
IDS = ["create", "set-out-of-scope", "set", "write-procedure", "load-csv"]
BOMB = "WITH range(1,30000000) AS l$ UNWIND l$ AS x$ RETURN x$"


@pytest.mark.parametrize(("attack", "why", "runs"), ATTACKS, ids=IDS)
async def test_a_write_after_a_dollar_name_is_refused_before_it_reaches_the_graph(
    falkordb_url: str, scratch: ScratchGraph, listener: FetchListener, attack: str, why: str, runs: bool
) -> None:
    query = attack.replace(URL, listener.url())
    assert any(why in problem for problem in refusals(attack)), refusals(attack)
    backends = local_backends(falkordb_url=falkordb_url, graph_name=scratch.name)
    try:
        out = await ToolCalls(backends).GraphQuery(call("GraphQuery", query=query))
    finally:
        await backends.aclose()
    assert not out.success and out.deterministic and out.output.startswith("Query not run: ")
    assert why in (out.error or "")
    assert not await scratch.changed() and listener.connections == 0

    unchecked = await scratch.run(query)  # what the check kept from the graph
    assert bool(unchecked.writes or listener.connections or await scratch.changed()) == runs, unchecked


async def test_a_return_of_a_dollar_name_gets_its_limit(falkordb_url: str, scratch: ScratchGraph) -> None:
    """The row cap finds the RETURN: FalkorDB builds and sends the rows kept + 1, not RESULTSET_SIZE's 100,000."""
    assert capped_rows(BOMB, 201) == f"{BOMB} LIMIT 201"
    backends = local_backends(falkordb_url=falkordb_url, graph_name=scratch.name)
    assert backends.graph is not None
    try:
        rows = await backends.graph.ro_query("WITH range(1, 300000) AS l$ UNWIND l$ AS x$ RETURN x$", max_rows=200)
    finally:
        await backends.aclose()
    assert len(rows.rows) == 200 and rows.total_rows == 201
