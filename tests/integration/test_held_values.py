"""Words a question says that the graph stores as values ("open" orders, "unpaid" invoices) become conditions on
the nodes a program reaches (backends/held_values.py, cypher/programs.py). On a real FalkorDB graph: the
program code ranks first returns the rows the question asks for; a word that is a name rather than one of a
property's few values conditions nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from backends.graph_store import GraphStore
from backends.grounding import ground
from backends.held_values import held_values
from backends.schema_check import SchemaCheck
from cypher.programs import HeldValue
from questions.value_words import value_words
from tests.seeded_graph import seeded_graph
from tools.program_chooser import ranked_programs_on

# Two customers place orders (status: open, shipped, cancelled; a flag: rush); invoices bill orders (status:
# paid, due). Warehouses have names, one of them "Open Yard": a name, not a status. Orders hold a total amount
# too: "the total amount of the invoices" sums the invoices' amount, "total" being the sum asked for.
GRAPH = (
    "CREATE (ann:Customer {name: 'Ann Shop'}), (bo:Customer {name: 'Bo Store'}), "
    "(w1:Warehouse {name: 'Open Yard'}), (w2:Warehouse {name: 'Dock Two'}), "
    "(o1:Order {code: 'O-1', status: 'open', rush: true, total_amount: 900}), "
    "(o2:Order {code: 'O-2', status: 'open', rush: false, total_amount: 800}), "
    "(o3:Order {code: 'O-3', status: 'shipped', rush: true}), "
    "(o4:Order {code: 'O-4', status: 'cancelled', rush: false}), "
    "(o5:Order {code: 'O-5', status: 'open', rush: false}), (o6:Order {code: 'O-6', status: 'shipped', rush: false}), "
    "(i1:Invoice {code: 'I-1', amount: 100, status: 'paid'}), (i2:Invoice {code: 'I-2', amount: 250, status: 'due'}), "
    "(i3:Invoice {code: 'I-3', amount: 40, status: 'due'}), (i4:Invoice {code: 'I-4', amount: 70, status: 'paid'}), "
    "(o1)-[:PLACED_BY]->(ann), (o2)-[:PLACED_BY]->(ann), (o3)-[:PLACED_BY]->(ann), (o4)-[:PLACED_BY]->(ann), "
    "(o5)-[:PLACED_BY]->(bo), (o6)-[:PLACED_BY]->(bo), (o1)-[:SHIPS_FROM]->(w1), (o2)-[:SHIPS_FROM]->(w2), "
    "(i1)-[:BILLS]->(o1), (i2)-[:BILLS]->(o2), (i3)-[:BILLS]->(o3), (i4)-[:BILLS]->(o5)"
)


@pytest_asyncio.fixture
async def graph(falkordb_url: str, unique: str) -> AsyncIterator[GraphStore]:
    async with seeded_graph(falkordb_url, f"held-{unique}", GRAPH) as name:
        yield GraphStore(falkordb_url, name)


async def first_rows(graph: GraphStore, question: str) -> list[list[Any]]:
    _, _, ranked = await ranked_programs_on(question, await ground(question, graph), graph, SchemaCheck(graph))
    return sorted((await graph.ro_query(ranked[0].query)).rows)


@pytest.mark.parametrize(
    ("question", "rows"),
    [
        ("How many open orders has Ann Shop placed?", [[2]]),
        ("List the cancelled orders of Ann Shop.", [["O-4"]]),
        ("What is the total amount of the unpaid invoices of Ann Shop?", [[290]]),
        ("How many orders of Ann Shop are not open?", [[2]]),
        ("Which rush orders did Ann Shop place?", [["O-1"], ["O-3"]]),
    ],
)
async def test_a_stored_value_the_question_says_picks_the_nodes(
    graph: GraphStore, question: str, rows: list[list[Any]]
) -> None:
    assert await first_rows(graph, question) == rows


async def test_a_name_and_a_word_no_property_holds_condition_nothing(graph: GraphStore) -> None:
    held = await held_values(graph, value_words("which orders ship from the open yard or the dock two, or are late"))
    # "open" is a status, so it is found; the warehouse called "Open Yard" is a name, not one of few values
    assert held == [HeldValue("Order", "status", "open")]
    assert await held_values(graph, value_words("how many orders are late")) == []
    # the flag's own name, negated: orders whose rush is not true
    assert await held_values(graph, value_words("non-rush orders")) == [HeldValue("Order", "rush", "true", True)]


async def test_an_order_listed_by_its_code_when_it_has_no_name(graph: GraphStore) -> None:
    assert await first_rows(graph, "Which orders has Bo Store placed?") == [["O-5"], ["O-6"]]
