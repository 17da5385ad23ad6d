"""A capitalised adjective names the thing it is formed from ("African" countries are Africa's, "Swedish" ones
Sweden's): found on the key that names its label, the nearest name in length when several start alike, and only
where no stored value equals the word itself. On a real FalkorDB graph."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from backends.graph_store import GraphStore
from backends.grounding import ground
from tests.seeded_graph import seeded_graph

GRAPH = (
    "CREATE (:Region {name: 'Africa'}), (:Region {name: 'North'}), "
    "(:Country {name: 'Central African Republic', code: 'CF'}), (:Country {name: 'Vietnam', code: 'VN'}), "
    "(:Country {name: 'India', code: 'IN'}), (:State {name: 'Indiana', code: 'IN-US'}), "
    "(:Country {name: 'Sweden', code: 'SE'}), (:Country {name: 'Jordan', code: 'JO'}), "
    "(:Currency {name: 'Jordanian dinar', code: 'JOD'}), (:Currency {name: 'Swiss Franc', code: 'CHF'}), "
    "(:Language {name: 'Swiss German', code: 'gsw'})"
)


@pytest_asyncio.fixture
async def graph(falkordb_url: str, unique: str) -> AsyncIterator[GraphStore]:
    async with seeded_graph(falkordb_url, f"formed-{unique}", GRAPH) as name:
        yield GraphStore(falkordb_url, name)


@pytest.mark.parametrize(
    ("question", "found"),
    [
        # the name it is formed from, not the country whose name contains the word
        ("Which African countries use the euro?", [("Region", "Africa", "formed")]),
        ("How many Vietnamese cities are there?", [("Country", "Vietnam", "formed")]),
        ("Which Swedish towns are largest?", [("Country", "Sweden", "formed")]),  # "Swed-ish": "Swed-en"
        ("Which Northern towns are largest?", [("Region", "North", "formed")]),
        ("List the Indian cities.", [("Country", "India", "formed")]),  # India, not Indiana: the nearest
        ("What currency does Jordan use?", [("Country", "Jordan", "exact")]),  # a name as stored stays itself
    ],
)
async def test_an_adjective_names_the_thing_it_is_formed_from(
    graph: GraphStore, question: str, found: list[tuple[str, str, str]]
) -> None:
    grounding = await ground(question, graph, describe=False)
    assert [(m.label, m.value, m.how) for m in grounding.matches] == found
    assert [(m.label, m.value) for m in grounding.described_entities(2)] == [(label, v) for label, v, _ in found]


async def test_a_word_a_stored_value_contains_is_still_found_when_no_name_forms_it(graph: GraphStore) -> None:
    grounding = await ground("What is the Jordanian dinar worth?", graph, describe=False)
    assert [(m.label, m.value, m.how) for m in grounding.matches] == [("Currency", "Jordanian dinar", "exact")]
    martian = await ground("Which Martian towns are largest?", graph, describe=False)
    assert martian.matches == [] and martian.unmatched == ["Martian"]


async def test_a_name_begun_with_a_capital_may_end_in_lower_case_words(graph: GraphStore) -> None:
    # "Swiss" alone is only part of two names; with the word after it, it is one stored name
    franc = await ground("Which countries is the Swiss franc used in?", graph, describe=False)
    assert [(m.mention, m.label, m.value, m.how) for m in franc.matches] == [
        ("Swiss franc", "Currency", "Swiss Franc", "exact")
    ]
    towns = await ground("Which Swiss towns are largest?", graph, describe=False)  # no stored name goes on
    assert {m.value for m in towns.matches} == {"Swiss Franc", "Swiss German"}
    assert towns.described_entities(2) == []
