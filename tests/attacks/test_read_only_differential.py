"""The read-only check read against FalkorDB itself. A seeded, bounded fuzz (tests/attacks/cypher_fuzz.py) writes
queries that mix writes, write procedures and LOAD CSV with comments, strings, backtick-quoted names and names
holding `$`; each is run with GRAPH.QUERY (not the read-only command) on a scratch graph. Whatever the check
calls a read must leave the graph as it was (nodes, relationships, indexes, constraints, and FalkorDB's own
write counters at zero) and make no connection to the listener every LOAD CSV URL points at. And whatever such
a read returns, the row cap's version of it returns at most the cap. Where the two readings of the text
differ, this finds it: a name like `x$` once hid the CREATE after it from the check."""

from __future__ import annotations

from collections import Counter

from cypher.read_only import refusals
from cypher.row_cap import capped_rows
from tests.attacks.cypher_fuzz import WRITES, fuzzed_queries
from tests.attacks.scratch_graph import FetchListener, Outcome, ScratchGraph

SEED = 20261127
COUNT = 1500  # about 9 s on a 2-core machine at load 5; FalkorDB answers each query in a millisecond or two
CAP = 5
BAIT = ("CREATE", "MERGE", "SET", "DELETE", "REMOVE", "FOREACH", "LOAD", "drop", "$")


async def run_and_watch(scratch: ScratchGraph, listener: FetchListener, query: str) -> tuple[Outcome, list[str]]:
    """The query's outcome and what it changed or fetched (empty: nothing); the scratch graph is made again
    after a change, so that every query meets the same graph."""
    connections = listener.connections
    outcome = await scratch.run(query)
    changes = list(outcome.writes)
    if listener.connections != connections:
        changes.append(f"{listener.connections - connections} connection(s) to the LOAD CSV listener")
    if await scratch.changed():
        changes.append("the graph differs")
    if changes:
        await scratch.create()
    return outcome, changes


async def test_every_write_the_fuzz_puts_in_a_query_is_refused_and_seen_when_it_runs(
    scratch: ScratchGraph, listener: FetchListener
) -> None:
    """The oracle works: each write piece, after a clause that binds a name holding `$`, is refused by the check,
    and run unchecked it changes the scratch graph or connects to the listener; a plain read does neither."""
    for write in WRITES:
        query = (
            "UNWIND [1] AS x$ "
            + " ".join(f"'{listener.url()}'" if p == "{url}" else p for p in write)
            + (" RETURN row" if "LOAD" in write else "")
        )
        assert refusals(query), query
        outcome, changes = await run_and_watch(scratch, listener, query)
        assert changes, (query, outcome)
    outcome, changes = await run_and_watch(scratch, listener, "MATCH (s:Seed) RETURN s.name ORDER BY s.name")
    assert outcome.rows and not changes


async def test_whatever_the_check_calls_a_read_changes_nothing_fetches_nothing_and_is_capped(
    scratch: ScratchGraph, listener: FetchListener
) -> None:
    escapes: list[tuple[str, list[str]]] = []
    uncapped: list[tuple[str, str]] = []
    tally: Counter[str] = Counter()
    for query in fuzzed_queries(SEED, COUNT, listener.url()):
        passed = not refusals(query)
        outcome, changes = await run_and_watch(scratch, listener, query)
        tally["ran"] += outcome.error is None
        if not passed:
            tally["refused, and FalkorDB would have written or fetched"] += bool(changes)
            continue
        if changes:
            escapes.append((query, changes))
            continue
        if outcome.error is not None:
            continue
        tally["passed and ran"] += 1
        tally["passed and ran, with a write word or $ in its text"] += any(b in query for b in BAIT)
        capped = capped_rows(query, CAP)
        capped_outcome, capped_changes = await run_and_watch(scratch, listener, capped)
        if capped_changes:
            escapes.append((capped, capped_changes))
        elif capped_outcome.rows is None or len(capped_outcome.rows) > CAP:
            uncapped.append((query, capped_outcome.error or f"{len(capped_outcome.rows or [])} rows"))
        tally["rows cut by the cap"] += len(outcome.rows or []) > CAP
    assert not escapes, f"{len(escapes)} queries the check passed changed or fetched: {escapes[:5]}"
    assert not uncapped, f"{len(uncapped)} reads the row cap left uncapped or broke: {uncapped[:5]}"
    # The fuzz reached what it is for (seeded: the same counts each run).
    assert tally["refused, and FalkorDB would have written or fetched"] >= 250, tally
    assert tally["passed and ran, with a write word or $ in its text"] >= 250, tally
    assert tally["rows cut by the cap"] >= 15, tally
