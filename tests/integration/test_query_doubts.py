"""A graph query's doubts (tools/query_doubts.py), against the real FalkorDB's procurement graph and its live
schema: each kind is found on a query that has it and not on one without it, and one graph step checks the
query that ran once, whether or not the query form cross-checked it."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import pytest_asyncio

from backends.graph_store import GraphStore
from backends.grounding import ground, walks_shorter_than_connection
from backends.schema_check import SchemaCheck
from contracts.query_path import EntityMatch, Grounding, StepOutput
from tests.integration.test_query_candidates import form, replies, rows_of
from tests.scripted_llm import ScriptedLLM
from tests.tool_calls import ToolCalls, call, local_backends
from tools.query_doubts import QueryDoubts, query_doubts

NAMED = "How many purchase orders does Acme Industrial have?"
FIGURE = "How many purchase orders have a total amount above 5000?"
WHICH_SUPPLIER = "Which supplier has the most purchase orders?"
SETTLES = "Which invoices does payment PAY-00481 settle?"
RETURNS_START = "MATCH (p:Payment {payment_id: 'PAY-00481'})-[:SETTLES]->(i:Invoice) RETURN p.payment_id AS payment"
RETURNS_REACHED = (
    "MATCH (p:Payment {payment_id: 'PAY-00481'})-[:SETTLES]->(i:Invoice) RETURN i.invoice_number AS invoice"
)
RANKED = (
    "MATCH (p:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) RETURN s.name AS supplier, count(p) AS orders "
    "ORDER BY orders DESC LIMIT 3"
)
COUNTED = "MATCH (p:PurchaseOrder) RETURN count(p) AS orders"


@pytest_asyncio.fixture
async def graph(falkordb_url: str) -> AsyncIterator[GraphStore]:
    store = GraphStore(falkordb_url, "procurement")
    yield store
    await store.aclose()


async def doubts(
    graph: GraphStore, question: str, query: str, *, with_rows: bool = False, schema: bool = True
) -> QueryDoubts:
    """The doubts of `query` for `question`, grounded on the real graph (and with the rows it returns)."""
    rows = await graph.ro_query(query) if with_rows else None
    return await query_doubts(
        question, query, await ground(question, graph, describe=False), SchemaCheck(graph) if schema else None, rows
    )


async def test_a_query_that_ignores_a_name_the_question_gives_is_doubted(graph: GraphStore) -> None:
    ignoring = await doubts(graph, NAMED, "MATCH (p:PurchaseOrder) RETURN count(p)")
    using = await doubts(
        graph, NAMED, "MATCH (p:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier {name: 'Acme Industrial'}) RETURN count(p)"
    )
    assert ignoring.ignored_names == ("Acme Industrial",) and ignoring.calls_for_form
    assert using.ignored_names == () and not using.calls_for_form and not using.loses_ties


async def test_a_query_that_leaves_out_a_figure_is_doubted(graph: GraphStore) -> None:
    leaving = await doubts(graph, FIGURE, "MATCH (p:PurchaseOrder) RETURN count(p)")
    using = await doubts(graph, FIGURE, "MATCH (p:PurchaseOrder) WHERE p.total_amount > 5000 RETURN count(p)")
    assert leaving.unused_figures == ("5000",) and leaving.loses_ties
    assert leaving.calls_for_form  # the form sets a condition on what it reaches
    assert using.unused_figures == () and not using.loses_ties and not using.calls_for_form


async def scored_step(falkordb_url: str, question: str, query: str) -> StepOutput:
    """One GraphQuery step for `question` as its activity runs it (no model call expected)."""
    with ScriptedLLM(replies()) as llm:
        backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url)
        request = call("GraphQuery", query=query)
        request.question = question
        try:
            return await ToolCalls(backends).GraphQuery(request)
        finally:
            await backends.aclose()


async def test_a_step_whose_query_leaves_out_the_questions_figure_is_scored_weak_and_repaired(
    falkordb_url: str,
) -> None:
    async def step(query: str) -> StepOutput:
        return await scored_step(falkordb_url, FIGURE, query)

    leaving = await step("MATCH (p:PurchaseOrder) RETURN count(p) AS orders")
    # the count of every order answers a broader question: below any threshold, and the ladder is told why
    assert leaving.success and leaving.confidence.score <= 0.5 and leaving.deterministic
    assert "never uses the question's figure 5000" in leaving.confidence.reasoning
    assert leaving.confidence.signals["unused_figures"] == 1.0
    using = await step("MATCH (p:PurchaseOrder) WHERE p.total_amount > 5000 RETURN count(p) AS orders")
    assert using.confidence.score == 0.9 and not using.deterministic
    assert "unused_figures" not in using.confidence.signals


async def test_a_query_that_matches_no_node_of_the_kind_asked_for_is_doubted(graph: GraphStore) -> None:
    question = "Which supplier sent the first invoice?"
    invoices = await doubts(graph, question, "MATCH (i:Invoice) RETURN i.invoice_number LIMIT 1")
    suppliers = await doubts(graph, WHICH_SUPPLIER, RANKED)
    assert invoices.unasked is not None and "asks which Supplier" in invoices.unasked
    assert invoices.calls_for_form and invoices.loses_ties
    assert suppliers.unasked is None and not suppliers.calls_for_form
    without_schema = await doubts(graph, question, "MATCH (i:Invoice) RETURN i.invoice_number LIMIT 1", schema=False)
    assert without_schema.unasked is None and without_schema.walk_doubts == ()  # the schema's checks need one


async def test_a_query_that_returns_the_named_thing_itself_has_a_walk_doubt(graph: GraphStore) -> None:
    start = await doubts(graph, SETTLES, RETURNS_START)
    reached = await doubts(graph, SETTLES, RETURNS_REACHED)
    assert any("the thing the question names itself" in doubt for doubt in start.walk_doubts)
    assert start.calls_for_form and start.loses_ties
    assert reached.walk_doubts == () and not reached.calls_for_form


async def test_rows_of_figures_only_for_a_which_question_lose_ties(graph: GraphStore) -> None:
    figures_only = await doubts(graph, WHICH_SUPPLIER, "MATCH (s:Supplier) RETURN count(s)", with_rows=True)
    named = await doubts(graph, WHICH_SUPPLIER, RANKED, with_rows=True)
    unseen = await doubts(graph, WHICH_SUPPLIER, "MATCH (s:Supplier) RETURN count(s)")
    assert figures_only.rows_without_names and figures_only.loses_ties
    assert not named.rows_without_names and not named.loses_ties
    assert not unseen.rows_without_names  # without the rows, nothing is said about them


def counting_walk_doubts(schema: SchemaCheck) -> Counter[str]:
    """Wrap this real SchemaCheck's own walk_doubts to count, per query, how often a step asks it."""
    asked: Counter[str] = Counter()
    original = schema.walk_doubts

    async def walk_doubts(question: str, queries: list[str], grounding: Grounding) -> list[str]:
        asked.update(queries)
        return await original(question, queries, grounding)

    schema.walk_doubts = walk_doubts  # type: ignore[method-assign]
    return asked


async def counted_step(
    falkordb_url: str, llm: ScriptedLLM, planned: str, question: str, candidates: int = 1
) -> tuple[StepOutput, Counter[str]]:
    """One GraphQuery step as its activity runs it (the query form on for doubted steps), and how often it
    asked the schema for each query's walk doubts."""
    backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url)
    backends.graph_candidates = candidates
    backends.form_when_doubted = True
    assert backends.schema is not None
    asked = counting_walk_doubts(backends.schema)
    request = call("GraphQuery", query=planned)
    request.question = question
    try:
        return await ToolCalls(backends).GraphQuery(request), asked
    finally:
        await backends.aclose()


async def test_an_undoubted_step_checks_its_query_for_walk_doubts_once(falkordb_url: str) -> None:
    with ScriptedLLM(replies()) as llm:
        out, asked = await counted_step(falkordb_url, llm, RANKED, WHICH_SUPPLIER)
    assert out.success and not llm.requests and "candidates" not in out.confidence.signals  # not cross-checked
    assert "short_walk" not in out.confidence.signals
    assert asked == Counter({RANKED: 1})


async def test_a_doubted_step_checks_each_query_once_and_keeps_the_evidence_of_the_one_that_ran(
    falkordb_url: str,
) -> None:
    ranking = form("Supplier", answer="most_connected", steps=(("ISSUED_TO", "incoming"),))
    with ScriptedLLM(replies(ranking)) as llm:  # the planner's count has no supplier in it: doubted
        out, asked = await counted_step(falkordb_url, llm, COUNTED, WHICH_SUPPLIER)
    assert out.confidence.signals["candidates"] == 2 and isinstance(rows_of(out)[0][0], str)  # the form's ran
    assert max(asked.values()) == 1  # no query checked twice: the form's, which ran, included
    assert "unasked" not in out.confidence.signals  # the evidence of the form's query (it matches suppliers)
    with ScriptedLLM(replies(form("Payment", answer="names", value="PAY-00481"))) as llm:
        kept, asked = await counted_step(falkordb_url, llm, RETURNS_START, SETTLES)
    assert "candidates" in kept.confidence.signals  # cross-checked, and its own query kept
    assert kept.confidence.signals["short_walk"] == 1.0 and asked[RETURNS_START] == 1


# Issued to another supplier: 3 relationships apart (through the place both deliver to), not 1.
APART = "How many relationships lie between purchase order PO-20240002 and Acme Industrial?"
DIRECT = (
    "MATCH (p:PurchaseOrder {po_number: 'PO-20240002'})-[:ISSUED_TO]->(s:Supplier {name: 'Acme Industrial'}) "
    "RETURN count(*) AS relationships"
)


async def test_an_empty_walk_shorter_than_the_named_things_connection_is_doubted(graph: GraphStore) -> None:
    direct = await doubts(graph, APART, DIRECT, with_rows=True)
    assert len(direct.too_short_joins) == 1 and "3 relationships apart" in direct.too_short_joins[0]
    assert direct.calls_for_form and direct.loses_ties
    walked = (
        "MATCH (p:PurchaseOrder {po_number: 'PO-20240002'})-[*3]-(s:Supplier {name: 'Acme Industrial'}) "
        "RETURN count(*) AS relationships"
    )
    assert (await doubts(graph, APART, walked, with_rows=True)).too_short_joins == ()  # it matched: 1
    assert (await doubts(graph, APART, DIRECT)).too_short_joins == ()  # rows unknown: nothing said


async def test_a_step_whose_walk_could_never_join_the_named_things_is_scored_weak(falkordb_url: str) -> None:
    with ScriptedLLM(replies()) as llm:
        backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url)
        request = call("GraphQuery", query=DIRECT)
        request.question = APART
        try:
            out = await ToolCalls(backends).GraphQuery(request)
        finally:
            await backends.aclose()
    # not "a genuine answer (they are unconnected)" at 0.85: the ladder repairs it, told why
    assert out.confidence.score < 0.5 and "3 relationships apart at the fewest" in out.confidence.reasoning
    assert out.confidence.signals["short_walk"] == 1.0 and out.confidence.signals["rows"] == 0
    assert out.deterministic  # run again, the same walk finds the same nothing: the ladder repairs, not repeats


async def test_a_walk_is_doubted_only_when_every_thing_its_names_may_be_is_farther_apart(falkordb_url: str) -> None:
    """Ann knows Bob through Mid (2 apart); Ann owns a pet also named Bob (1 apart); Cid knows no one."""
    tiny = GraphStore(falkordb_url, "walks_apart")
    try:
        await tiny.write_query(
            "CREATE (a:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Mid'})-[:KNOWS]->"
            "(:Person {name: 'Bob'}), (a)-[:OWNS]->(:Pet {name: 'Bob'}), (:Person {name: 'Cid'})",
            {},
        )
        grounding = Grounding(
            matches=[
                EntityMatch(mention=name, label=label, property="name", value=name, how="exact")
                for name, label in (("Ann", "Person"), ("Bob", "Person"), ("Bob", "Pet"), ("Cid", "Person"))
            ]
        )

        async def doubted(query: str) -> list[str]:
            return await walks_shorter_than_connection(query, grounding, tiny)

        person = await doubted("MATCH (a:Person {name: 'Ann'})-[:KNOWS]->(b:Person {name: 'Bob'}) RETURN count(*)")
        assert len(person) == 1 and "2 relationships apart" in person[0]
        # unlabelled, Bob may be the pet one relationship away: the empty result may be the answer
        assert await doubted("MATCH (a {name: 'Ann'})-[:KNOWS]->(b {name: 'Bob'}) RETURN count(*)") == []
        # two things the graph does not connect at all
        assert await doubted("MATCH (a:Person {name: 'Ann'})-[:KNOWS]->(c:Person {name: 'Cid'}) RETURN count(*)") == []
    finally:
        await tiny.aclose()


async def test_a_step_whose_rows_hold_no_name_where_the_question_asks_which_is_repaired(falkordb_url: str) -> None:
    """ "Which airport is lowest" answered from rows of heights only: the answer would have to invent the name."""
    heights = await scored_step(
        falkordb_url,
        WHICH_SUPPLIER,
        "MATCH (p:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) RETURN count(p) AS orders ORDER BY orders DESC LIMIT 1",
    )
    assert heights.confidence.score <= 0.5 and heights.deterministic
    assert "the rows hold no name" in heights.confidence.reasoning
    named = await scored_step(falkordb_url, WHICH_SUPPLIER, RANKED)
    assert named.confidence.score == 0.9 and not named.deterministic
