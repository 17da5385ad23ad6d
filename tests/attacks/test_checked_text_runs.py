"""The text that runs is the text that was checked. A rewrite after the read-only check once cut an unasked
`LIMIT n` out and stripped the whitespace before it: when a `//` comment ended that line, its newline went,
the comment ran on into a block comment after the LIMIT, and the block's text became code (a UNION with LOAD
CSV that fetched from a listener under GRAPH.RO_QUERY). The lift now blanks the clause in place, and the graph
store checks the very text it sends, so no rewrite can make a query other than what the check read. A NUL
byte, at which FalkorDB stops reading (the appended row cap with it), is refused as well."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.graph_store import GraphQueryError, GraphStore
from cypher.read_only import refusals
from cypher.tokens import keywords
from tests.attacks.scratch_graph import FetchListener, ScratchGraph
from tools.unasked_limit import unasked_limit_lifted

QUESTION = "Which people are in the graph?"  # no number, no superlative: an unasked LIMIT is lifted


def hidden_union(url: str) -> str:
    return (
        "MATCH (p:Person) RETURN p.name AS name // the names\n"
        "LIMIT 5 /* page of five\n"
        f"UNION ALL LOAD CSV FROM '{url}' AS name RETURN name //*/"
    )


@pytest_asyncio.fixture
async def store(scratch: ScratchGraph, falkordb_url: str) -> AsyncIterator[GraphStore]:
    graph = GraphStore(falkordb_url, scratch.name)
    yield graph
    await graph.aclose()


def test_the_lifted_limit_keeps_the_comment_that_hides_a_union(listener: FetchListener) -> None:
    payload = hidden_union(listener.url())
    assert refusals(payload) == []  # the UNION is a comment's text: the check rightly passes it
    lifted = unasked_limit_lifted(payload, QUESTION, rows_returned=5)
    assert lifted is not None
    words = [w for _, w in keywords(lifted)]
    assert words == [w for _, w in keywords(payload) if w != "LIMIT"] and not {"UNION", "LOAD"} & set(words)
    assert refusals(lifted) == []


async def test_the_store_refuses_a_query_the_check_refuses_whoever_wrote_it(
    store: GraphStore, listener: FetchListener
) -> None:
    # what the old lift made of the payload: the block comment's text as code
    rewritten = f"MATCH (p:Person) RETURN p.name AS name UNION ALL LOAD CSV FROM '{listener.url()}' AS name RETURN name"
    with pytest.raises(GraphQueryError, match="LOAD CSV"):
        await store.ro_query(rewritten)
    assert listener.connections == 0
    # an ordinary read still runs
    assert (await store.ro_query("MATCH (p:Person) RETURN p.name")).rows == [["p"]]


async def test_a_nul_byte_is_refused_rather_than_cutting_off_the_row_cap(store: GraphStore) -> None:
    with pytest.raises(GraphQueryError, match="control character"):
        await store.ro_query("UNWIND range(1, 90000) AS x RETURN x\x00", max_rows=200)
    with pytest.raises(GraphQueryError, match="control character"):
        await store.ro_query("MATCH (p:Person) WHERE p.name = 'p\x00' RETURN p")  # inside a string too
    # other control characters inside a string are text, and may be asked for
    assert (await store.ro_query("RETURN 'tab\tand\x1bescape' AS s")).rows == [["tab\tand\x1bescape"]]


# Around LIMIT, what a model or a person may write: spaces, newlines, line and block comments, and after it a
# comment that holds code.
_GAPS = st.sampled_from([" ", "\n", "  \n  ", " // c\n", "// c\n", " /* c */ ", "/* c\n */", "\t"])
_TAILS = st.sampled_from(
    ["", " ", ";", " // t", " /* x\nUNION ALL MATCH (n) DETACH DELETE n //*/", "\n/* LIMIT 3 */", " //*/\n"]
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(before=_GAPS, after=_GAPS, rows=st.integers(2, 50), tail=_TAILS)
def test_every_query_the_check_accepts_is_still_accepted_and_the_same_after_the_lift(
    before: str, after: str, rows: int, tail: str
) -> None:
    query = f"MATCH (p:Person) RETURN p.name AS name{before}LIMIT{after}{rows}{tail}"
    if refusals(query):
        return
    lifted = unasked_limit_lifted(query, QUESTION, rows_returned=rows)
    if lifted is None:
        return  # not a final literal LIMIT the lift reads: nothing rewritten
    assert refusals(lifted) == []
    # the same code, word for word, but the LIMIT and its number
    assert [w for _, w in keywords(lifted)] == [w for _, w in keywords(query) if w != "LIMIT"]
