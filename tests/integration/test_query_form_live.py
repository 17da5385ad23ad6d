"""A filled-in query form compiles to Cypher that FalkorDB runs and that returns the answer the form
describes: walks of several hops (directions the schema leaves no choice about are its own), shared and
excluded neighbours, conditions, rankings and totals."""

from __future__ import annotations

import json

import pytest

from backends.graph_store import GraphStore
from backends.schema_check import SchemaCheck
from cypher.intent import Anchor, Condition, Hop, IntentError, QueryIntent, compile_intent, parse_intent
from tests.seeded_graph import seeded_graph

# People know people and live in towns, towns lie in regions; one town has no population stored.
GRAPH = (
    "CREATE (ann:Person {name: 'Ann', age: 31}), (bob:Person {name: 'Bob', age: 45}), "
    "(cat:Person {name: 'Cat', age: 28}), (dan:Person {name: 'Dan', age: 52}), (eve:Person {name: 'Eve', age: 39}), "
    "(north:Region {name: 'North'}), (south:Region {name: 'South'}), "
    "(t1:Town {name: 'Ashby', population: 1200, code: 101}), (t2:Town {name: 'Brill', population: 800, code: 102}), "
    "(t3:Town {name: 'Colne', code: 103}), "
    "(ann)-[:KNOWS]->(bob), (ann)-[:KNOWS]->(cat), (bob)-[:KNOWS]->(dan), (cat)-[:KNOWS]->(dan), "
    "(cat)-[:KNOWS]->(eve), (dan)-[:KNOWS]->(ann), (eve)-[:KNOWS]->(bob), "
    "(ann)-[:LIVES_IN]->(t1), (bob)-[:LIVES_IN]->(t1), (cat)-[:LIVES_IN]->(t2), (dan)-[:LIVES_IN]->(t3), "
    "(eve)-[:LIVES_IN]->(t2), (t1)-[:IN_REGION]->(north), (t2)-[:IN_REGION]->(north), (t3)-[:IN_REGION]->(south)"
)

ANN = Anchor("Person", "name", "Ann")
CASES = [
    # two hops of one relationship: whom Ann's acquaintances know (Ann herself left out)
    (QueryIntent(ANN, (Hop("KNOWS"), Hop("KNOWS"))), {("Dan",), ("Eve",)}),
    # the second hop goes against the arrow, as the schema allows only that way from a town
    (QueryIntent(ANN, (Hop("LIVES_IN"), Hop("LIVES_IN", "outgoing"))), {("Bob",)}),
    # three hops through two labels and back
    (
        QueryIntent(Anchor("Person", "name", "Dan"), (Hop("LIVES_IN"), Hop("IN_REGION"), Hop("IN_REGION", "incoming"))),
        {("Colne",)},
    ),
    # shared by two named people, and had by one but not the other
    (QueryIntent(ANN, (Hop("KNOWS"),), "also_reached_from_other", Anchor("Person", "name", "Eve")), {("Bob",)}),
    (QueryIntent(ANN, (Hop("KNOWS"),), "not_reached_from_other", Anchor("Person", "name", "Eve")), {("Cat",)}),
    # a condition on what is reached, and counts
    (QueryIntent(ANN, (Hop("KNOWS"),), condition=Condition("age", ">", "30")), {("Bob",)}),
    (QueryIntent(ANN, (Hop("KNOWS"), Hop("KNOWS")), answer="count"), {(2,)}),
    # rankings skip a missing value; totals count each node once however often it is reached
    (QueryIntent(Anchor("Town"), answer="highest", answer_key="population"), None),
    (QueryIntent(ANN, (Hop("KNOWS"), Hop("LIVES_IN")), answer="sum", answer_key="population"), {(2000,)}),
    # the people who know the most people
    (QueryIntent(Anchor("Person"), (Hop("KNOWS"),), answer="most_connected"), None),
    # a value read from the named node; a number-like name matched whether stored as a number or text
    (QueryIntent(Anchor("Person", "name", "Dan"), answer="value", answer_key="age"), {("Dan", 52)}),
    (QueryIntent(Anchor("Town", "code", "102"), (Hop("IN_REGION"),)), {("North",)}),
]


@pytest.fixture
async def people(falkordb_url: str, unique: str):  # type: ignore[no-untyped-def]
    async with seeded_graph(falkordb_url, f"people-{unique}", GRAPH) as name:
        store = GraphStore(falkordb_url, name)
        try:
            yield store
        finally:
            await store.aclose()


@pytest.mark.parametrize(("intent", "expected"), CASES)
async def test_a_filled_in_form_returns_the_rows_it_describes(
    people: GraphStore, intent: QueryIntent, expected: set[tuple[object, ...]] | None
) -> None:
    facts = await SchemaCheck(people).facts()
    rows = (await people.ro_query(compile_intent(intent, facts.nodes, facts.rels))).rows
    if intent.answer == "highest":
        assert rows[0] == ["Ashby", 1200] and all(r[1] is not None for r in rows)
    elif intent.answer == "most_connected":
        # Ann and Cat tie, knowing two each: both come first, by name, then the rest by how many they know
        assert rows[:2] == [["Ann", 2], ["Cat", 2]]
        assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    else:
        assert {tuple(r) for r in rows} == expected


async def test_a_form_the_schema_cannot_hold_is_refused_with_the_reason(people: GraphStore) -> None:
    facts = await SchemaCheck(people).facts()
    with pytest.raises(IntentError, match="IN_REGION does not connect Person"):
        compile_intent(QueryIntent(ANN, (Hop("IN_REGION"),)), facts.nodes, facts.rels)
    with pytest.raises(IntentError, match="no label"):
        compile_intent(QueryIntent(Anchor("Planet", "name", "Mars")), facts.nodes, facts.rels)
    with pytest.raises(IntentError, match="needs an answer_key"):
        compile_intent(QueryIntent(ANN, (Hop("KNOWS"),), answer="highest"), facts.nodes, facts.rels)
    with pytest.raises(IntentError, match="not a filled-in query form"):
        parse_intent('{"steps": []}')


async def test_names_with_quotes_stay_values(people: GraphStore) -> None:
    """A name is a value in the compiled query, never Cypher: a quote in it cannot end the string."""
    facts = await SchemaCheck(people).facts()
    reply = json.dumps(
        {
            "start": {"label": "Person", "key": "name", "value": "Ann' OR 1=1 //"},
            "steps": [],
            "combine": "none",
            "other": {"label": "Person", "key": "", "value": ""},
            "condition": {"key": "", "operator": "=", "value": ""},
            "answer": "names",
            "answer_key": "",
        }
    )
    query = compile_intent(parse_intent(reply), facts.nodes, facts.rels)
    assert (await people.ro_query(query)).rows == []
