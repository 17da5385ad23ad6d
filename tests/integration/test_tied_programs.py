"""Of programs code ranks first or nearly, the first that answers goes first (tools/tied_programs.py), read on a
real FalkorDB graph: one that matches nothing gives way to a tied one that matches, never to one that trails by
more than TIED_GAP, and when all tied ones are empty code's order stands."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from backends.graph_store import GraphStore
from cypher.intent import Anchor, QueryIntent
from cypher.programs import Program
from cypher.walk_space import Walk
from tests.seeded_graph import seeded_graph
from tools.tied_programs import TIED_GAP, answering_first

GRAPH = "CREATE (:Town {name: 'Ashby'}), (:Town {name: 'Brill'}), (:Region {name: 'North'})"
NOTHING = "MATCH (t:Village) RETURN t.name AS name"
NO_COUNT = "MATCH (t:Village) RETURN count(t) AS n"
TOWNS = "MATCH (t:Town) RETURN t.name AS name"
REGIONS = "MATCH (r:Region) RETURN r.name AS name"


def program(query: str, score: int) -> Program:
    intent = QueryIntent(Anchor("Town"))
    return Program(Walk("walk", intent, (frozenset({"Town"}),)), intent, query, score)


@pytest_asyncio.fixture
async def graph(falkordb_url: str, unique: str) -> AsyncIterator[GraphStore]:
    async with seeded_graph(falkordb_url, f"tied-{unique}", GRAPH) as name:
        yield GraphStore(falkordb_url, name)


async def test_a_tied_program_that_answers_goes_before_one_that_matches_nothing(graph: GraphStore) -> None:
    empty, count_of_none, towns, regions = (
        program(NOTHING, 9),
        program(NO_COUNT, 9),
        program(TOWNS, 9),
        program(REGIONS, 5),
    )
    assert [p.query for p in await answering_first([empty, count_of_none, towns, regions], graph)] == [
        TOWNS,
        NOTHING,
        NO_COUNT,
        REGIONS,
    ]


async def test_an_answer_trailing_far_never_jumps_and_all_empty_keeps_the_order(graph: GraphStore) -> None:
    far = program(REGIONS, 9 - TIED_GAP - 1)
    assert [p.query for p in await answering_first([program(NOTHING, 9), far], graph)] == [NOTHING, REGIONS]
    near = program(REGIONS, 9 - TIED_GAP)
    assert [p.query for p in await answering_first([program(NOTHING, 9), near], graph)] == [REGIONS, NOTHING]
    both_empty = [program(NOTHING, 9), program(NO_COUNT, 9)]
    assert [p.query for p in await answering_first(both_empty, graph)] == [NOTHING, NO_COUNT]
    first_answers = [program(TOWNS, 9), program(REGIONS, 9)]
    assert [p.query for p in await answering_first(first_answers, graph)] == [TOWNS, REGIONS]
