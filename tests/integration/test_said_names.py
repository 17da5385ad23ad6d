"""Names a question writes without a capital ("s-block", "simple cubic", "Period 2") are found in the graph as
stored, and the program code ranks first starts from them; a word that spells one relationship, or is part of
a property of two words, hints no other relationship; the programs ranked nearly as high are run beside the
first and their disagreement measured. On a real FalkorDB graph."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
import pytest_asyncio

from backends.graph_store import GraphStore
from backends.grounding import ground
from backends.schema_check import SchemaCheck
from cypher.programs import Program
from tests.integration.test_held_values import first_rows
from tests.seeded_graph import seeded_graph
from tools.program_chooser import ranked_programs_on
from tools.program_rivals import RIVAL_GAP, rivals_disagree

# Elements in blocks and periods (lower-case and numbered names), with the people and places of discovery: two
# relationships share the word "discovered". "Reading" is a place, and "reading" a word of a question.
GRAPH = (
    "CREATE (s:Block {name: 's-block'}), (p:Block {name: 'p-block'}), "
    "(p1:Period {name: 'Period 1', number: 1}), (p2:Period {name: 'Period 2', number: 2}), "
    "(c:Structure {name: 'simple cubic'}), (h:Structure {name: 'cubic'}), "
    "(ann:Person {name: 'Ann Vale'}), (bo:Person {name: 'Bo Lund'}), (count:Person {name: 'Count'}), "
    "(uk:Place {name: 'Reading'}), (se:Place {name: 'Uppsala'}), (th:Place {name: 'The Hague'}), "
    "(hh:Place {name: 'Hague Hall'}), (cw:Place {name: 'Cubicle Works'}), (td:Place {name: 'Thủ Đức'}), "
    "(bh:Place {name: 'Bosnia and Herzegovina'}), (dr:Place {name: 'Democratic Republic of the Congo'}), "
    "(rc:Place {name: 'Republic of the Congo'}), "
    "(li:Element {name: 'Lithium', mass_number: 7, mass: 6.94, discovery_year: 1817}), "
    "(be:Element {name: 'Beryllium', mass_number: 9, mass: 9.01, discovery_year: 1798}), "
    "(b:Element {name: 'Boron', mass_number: 11, mass: 10.81, discovery_year: 1808}), "
    "(po:Element {name: 'Polonium', mass_number: 209, mass: 209.0, discovery_year: 1898}), "
    "(li)-[:IN_BLOCK]->(s), (be)-[:IN_BLOCK]->(s), (b)-[:IN_BLOCK]->(p), (po)-[:IN_BLOCK]->(p), "
    "(li)-[:IN_PERIOD]->(p2), (be)-[:IN_PERIOD]->(p2), (b)-[:IN_PERIOD]->(p2), "
    "(po)-[:HAS_STRUCTURE]->(c), (li)-[:HAS_STRUCTURE]->(h), "
    "(li)-[:DISCOVERED_BY]->(ann), (be)-[:DISCOVERED_BY]->(bo), (b)-[:DISCOVERED_BY]->(bo), "
    "(li)-[:DISCOVERED_IN]->(se), (be)-[:DISCOVERED_IN]->(uk), (b)-[:DISCOVERED_IN]->(uk), (po)-[:DISCOVERED_IN]->(uk)"
)


@pytest_asyncio.fixture
async def graph(falkordb_url: str, unique: str) -> AsyncIterator[GraphStore]:
    async with seeded_graph(falkordb_url, f"said-{unique}", GRAPH) as name:
        yield GraphStore(falkordb_url, name)


async def test_lower_case_and_numbered_names_are_found_as_stored(graph: GraphStore) -> None:
    grounding = await ground("Which elements are in s-block, or in Period 2, or simple cubic?", graph)
    found = [(m.label, m.value) for m in grounding.matches]
    # "simple cubic" is one name, not "cubic" as well; a word written in lower case is no place called "Reading"
    assert found == [("Block", "s-block"), ("Period", "Period 2"), ("Structure", "simple cubic")]
    # nor is "Count", opening the question with a capital as English does, the person called Count
    counted = await ground("Count the elements that Bo Lund discovered.", graph)
    assert [(m.label, m.value) for m in counted.matches] == [("Person", "Bo Lund")]


async def test_a_name_opening_the_question_is_found_as_stored(graph: GraphStore) -> None:
    # English capitalises a sentence's first word, but one that is no word a request opens with may be a name
    boron = await ground("Boron was discovered by whom?", graph)
    assert [(m.label, m.value) for m in boron.matches] == [("Element", "Boron")]
    cubic = await ground("Cubic: which elements have it?", graph)  # three letters or more, written as stored
    assert [(m.label, m.value) for m in cubic.matches] == [("Structure", "cubic")]
    owned = await ground("Boron's discoverer?", graph)  # a possessive names its owner
    assert [(m.label, m.value) for m in owned.matches] == [("Element", "Boron")]
    typed = await ground("what is lithium's mass?", graph)  # typed in lower case, a possessive all the same
    assert [(m.label, m.value) for m in typed.matches] == [("Element", "Lithium")]
    which = await ground("Which elements did Bo Lund discover?", graph)
    assert [(m.label, m.value) for m in which.matches] == [("Person", "Bo Lund")]
    # a capitalised article belongs to the name stored with it; capitals of other scripts start names too
    hague = await ground("Which elements were discovered in The Hague or in Thủ Đức?", graph)
    assert [(m.label, m.value) for m in hague.matches] == [("Place", "The Hague"), ("Place", "Thủ Đức")]
    # a stored name whose capitals a lower-case word splits takes the place of its parts, found apart
    split = await ground("Which elements were discovered in Bosnia and Herzegovina or by Bo Lund?", graph)
    assert [(m.label, m.value) for m in split.matches] == [("Place", "Bosnia and Herzegovina"), ("Person", "Bo Lund")]
    assert not split.unmatched
    congo = await ground("Which elements were discovered in the Democratic Republic of the Congo?", graph)
    assert [m.value for m in congo.matches] == ["Democratic Republic of the Congo"]  # not the republic within it
    # a name found as written goes where the question says it; a word of a name is no part of a longer word
    ordered = await ground("In s-block, which elements did Bo Lund find at Cubicle Works in cubic form?", graph)
    assert [m.value for m in ordered.matches] == ["s-block", "Bo Lund", "Cubicle Works", "cubic"]
    reading = await ground("Which elements were discovered by Bo Lund while reading about cubic forms?", graph)
    assert [(m.label, m.value) for m in reading.matches] == [("Person", "Bo Lund"), ("Structure", "cubic")]


async def test_a_name_written_in_lower_case_where_a_noun_phrase_opens(graph: GraphStore) -> None:
    # the question capitalises another name, and a determiner or a preposition opens this one
    found = await ground("Which elements did Bo Lund discover in uppsala?", graph)
    assert [(m.label, m.value) for m in found.matches] == [("Person", "Bo Lund"), ("Place", "Uppsala")]
    plural = await ground("Which of the simple cubics did Bo Lund find?", graph)  # the plural of a stored name
    assert [(m.mention, m.value) for m in plural.matches] == [("simple cubics", "simple cubic"), ("Bo Lund", "Bo Lund")]
    # an apostrophe inside a word quotes nothing: "Bo Lund's ... aren't" names two people, no third
    owned = await ground("Which elements are Bo Lund's finds that Ann Vale's aren't?", graph)
    assert [m.value for m in owned.matches] == ["Bo Lund", "Ann Vale"] and owned.unmatched == []


async def test_a_question_typed_in_lower_case_finds_its_names_as_stored(graph: GraphStore) -> None:
    grounding = await ground("which elements were discovered in uppsala or by bo lund?", graph)
    assert [(m.mention, m.value) for m in grounding.matches] == [("uppsala", "Uppsala"), ("bo lund", "Bo Lund")]


@pytest.mark.parametrize(
    ("question", "rows"),
    [
        ("How many elements is s-block connected to through incoming in block?", [[2]]),
        (
            "Which elements is Period 2 connected to through its incoming in period relationships?",
            [["Beryllium"], ["Boron"], ["Lithium"]],
        ),
        ("Which elements have the simple cubic structure?", [["Polonium"]]),
        # "discovered by" spells DISCOVERED_BY; "discovered" is then no hint of DISCOVERED_IN
        ("Count the elements that Bo Lund has an incoming discovered by relationship with.", [[2]]),
        # "mass number" is a property read, not a count; "discovery year" no DISCOVERED_* walk
        ("What is the mass number of Boron?", [["Boron", 11]]),
        ("What discovery year does the element Polonium have?", [["Polonium", 1898]]),
    ],
)
async def test_the_first_program_reads_the_question_as_said(
    graph: GraphStore, question: str, rows: list[list[Any]]
) -> None:
    assert await first_rows(graph, question) == rows


async def test_rival_readings_are_run_and_their_disagreement_is_measured(graph: GraphStore) -> None:
    question = "Which elements are in Period 2?"
    _, _, ranked = await ranked_programs_on(question, await ground(question, graph), graph, SchemaCheck(graph))
    first = replace(
        ranked[0], query="MATCH (e:Element)-[:IN_PERIOD]->(:Period {name: 'Period 2'}) RETURN e.name", score=10
    )

    def rival(query: str, score: int) -> Program:
        return replace(ranked[0], query=query, score=score)

    same = rival("MATCH (e:Element)-[:IN_PERIOD]->(p:Period {number: 2}) RETURN e.name AS name, e.name AS shown", 9)
    other = rival("MATCH (e:Element)-[:IN_BLOCK]->(:Block {name: 's-block'}) RETURN e.name", 8)
    far = rival("MATCH (e:Element) RETURN e.name", 10 - RIVAL_GAP - 1)
    broken = rival("MATCH (e:Element RETURN e", 9)
    assert await rivals_disagree(graph, [first, same]) == 0.0  # the same names, whatever the columns
    assert await rivals_disagree(graph, [first, same, other]) == 0.5
    assert await rivals_disagree(graph, [first, far]) == 0.0  # too far behind to be a rival reading
    counted = replace(other, intent=replace(other.intent, answer="count"), query="MATCH (e:Element) RETURN count(e)")
    assert await rivals_disagree(graph, [first, counted]) == 0.0  # a count beside a list is another shape
    assert await rivals_disagree(graph, [first, broken, other]) == 1.0  # a rival that cannot run is left out
    assert await rivals_disagree(graph, [replace(first, query="MATCH (e RETURN e"), other]) is None
