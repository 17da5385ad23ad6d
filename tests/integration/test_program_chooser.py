"""The query chosen instead of written (tools/program_chooser.py): the question is grounded and its schema read
from a real FalkorDB graph, its programs enumerated, ranked and put in words, and the (scripted) model, reached
through the real client, picks one by number under the grammar; the chosen program's query returns the rows the
question asks for. A reply that chooses nothing shown is a clear error; choosing none is an answer of its own."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from backends import Backends
from backends.grounding import ground
from tests.scripted_llm import ScriptedLLM
from tests.seeded_graph import seeded_graph
from tests.tool_calls import local_backends
from tools.program_chooser import ProgramChoice, ProgramChoiceError, choose_program, program_query

# People (with their roles) know people (for some years) and live in towns; towns lie in regions.
GRAPH = (
    "CREATE (ann:Person {name: 'Ann', age: 31, role: 'nurse'}), "
    "(bob:Person {name: 'Bob', age: 45, role: 'teacher'}), (cat:Person {name: 'Cat', age: 28, role: 'nurse'}), "
    "(dan:Person {name: 'Dan', age: 52, role: 'teacher'}), (eve:Person {name: 'Eve', age: 39, role: 'pilot'}), "
    "(north:Region {name: 'North'}), (south:Region {name: 'South'}), "
    "(t1:Town {name: 'Ashby', population: 1200}), (t2:Town {name: 'Brill', population: 800}), "
    "(t3:Town {name: 'Colne', population: 300}), (t4:Town {name: 'Dunmore', population: 150}), "
    "(ann)-[:KNOWS {years: 2}]->(bob), (ann)-[:KNOWS {years: 9}]->(cat), (bob)-[:KNOWS {years: 4}]->(dan), "
    "(cat)-[:KNOWS {years: 1}]->(dan), (cat)-[:KNOWS {years: 6}]->(eve), (dan)-[:KNOWS {years: 7}]->(ann), "
    "(eve)-[:KNOWS {years: 3}]->(bob), "
    "(ann)-[:LIVES_IN]->(t1), (bob)-[:LIVES_IN]->(t1), (cat)-[:LIVES_IN]->(t2), (dan)-[:LIVES_IN]->(t3), "
    "(eve)-[:LIVES_IN]->(t2), (t1)-[:IN_REGION]->(north), (t2)-[:IN_REGION]->(north), (t3)-[:IN_REGION]->(south), "
    "(t4)-[:IN_REGION]->(north)"
)


def choosing(line: str) -> Any:
    """A model that reads the numbered programs in its prompt and picks the one said in `line` (99: none
    of those shown says it)."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        shown = body["messages"][-1]["content"].split("Programs:\n", 1)[1]
        numbers = [text.split(". ", 1)[0] for text in shown.splitlines() if text.split(". ", 1)[-1] == line]
        return 200, json.dumps({"reading": line[:100], "program": int(numbers[0]) if numbers else 99})

    return respond


def replying(text: str) -> Any:
    return lambda body: (200, text)


@dataclass
class People:
    backends: Backends
    llm: ScriptedLLM

    async def choose(self, question: str) -> ProgramChoice:
        assert self.backends.graph is not None
        return await program_query(question, await ground(question, self.backends.graph), self.backends)

    async def rows(self, choice: ProgramChoice) -> list[list[Any]]:
        assert self.backends.graph is not None
        return (await self.backends.graph.ro_query(choice.query)).rows


@pytest_asyncio.fixture
async def graph_name(falkordb_url: str, unique: str) -> AsyncIterator[str]:
    async with seeded_graph(falkordb_url, f"programs-{unique}", GRAPH) as name:
        yield name


@asynccontextmanager
async def people(falkordb_url: str, graph_name: str, respond: Any) -> AsyncIterator[People]:
    with ScriptedLLM(respond) as llm:
        backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url, graph_name=graph_name)
        try:
            yield People(backends, llm)
        finally:
            await backends.aclose()


async def test_a_relationship_named_twice_is_chosen_and_walked_twice(falkordb_url: str, graph_name: str) -> None:
    two_hops = 'from the Person "Ann", follow KNOWS to a Person, then KNOWS to a Person; answer: their names'
    async with people(falkordb_url, graph_name, choosing(two_hops)) as world:
        choice = await world.choose("Who do the people Ann knows know?")
        assert sorted(map(tuple, await world.rows(choice))) == [("Dan",), ("Eve",)]  # Ann herself left out
        assert choice.program is not None and choice.program.walk.types == ("KNOWS", "KNOWS")
        assert choice.reading == two_hops[:100]  # the chain in the model's own words, kept as evidence
        [request] = world.llm.requests
        grammar = request["response_format"]["schema"]
        assert list(grammar["properties"]) == ["reading", "program"]  # the chain is said before the choice
        assert grammar["properties"]["program"]["enum"] == list(range(0, len(choice.candidates) + 1))
        assert request["temperature"] == 0 and two_hops in request["messages"][-1]["content"]
        assert "- Person: age, name" in request["messages"][0]["content"]


@pytest.mark.parametrize(
    ("question", "line", "rows"),
    [
        (
            "Which people do both Ann and Eve know?",
            'the Person nodes reached both from the Person "Ann" and from the Person "Eve": from each, follow '
            "KNOWS to a Person; answer: their names",
            [["Bob"]],
        ),
        (
            "How many people live in Ashby?",
            'from the Town "Ashby", follow LIVES_IN backwards (from Town to Person); answer: how many there are',
            [[2]],
        ),
        (
            "Which people that Ann knows are older than 30?",
            'from the Person "Ann", follow KNOWS to a Person; only those whose age is above "30"; answer: their names',
            [["Bob"]],
        ),
        (
            "Which person connects Ann and Eve?",
            'the Person nodes between the Person "Ann" and the Person "Eve": from the first, follow KNOWS to a '
            "Person, then KNOWS to a Person; answer: their names",
            [["Cat"]],
        ),
        (
            "Which regions have more than 2 people living there?",
            "from every Region, follow IN_REGION backwards (from Region to Town), then LIVES_IN backwards (from "
            "Town to Person); only the Region nodes that reach more than 2 of them; answer: those Region nodes and "
            "how many each reaches",
            [["North", 4]],
        ),
        (
            "Which towns have no people living in them?",
            "every Town; only those with no LIVES_IN backwards from a Person; answer: their names",
            [["Dunmore"]],
        ),
        (
            "Who is older, Ann or Bob?",
            'the Person "Ann" against the Person "Bob", by their age; answer: the one whose is higher (both on a '
            "tie), with its figure",
            [["Bob", 45]],
        ),
        (
            "Does Ann know more people than Eve?",
            'the Person "Ann" against the Person "Eve", by how many Person nodes each reaches: from each, follow '
            "KNOWS to a Person; answer: whether the first's is higher (yes or no), with both figures",
            [["yes", "Ann", 2, "Eve", 1]],
        ),
        (
            "Which has more people living there, Ashby or Brill?",
            'the Town "Ashby" against the Town "Brill", by how many Person nodes each reaches: from each, follow '
            "LIVES_IN backwards (from Town to Person); answer: the one whose is higher (both on a tie), with its "
            "figure",
            [["Ashby", 2], ["Brill", 2]],  # a tie names both
        ),
        (
            "Does Ann know Bob?",
            'whether the Person "Ann" reaches the Person "Bob": follow KNOWS to a Person; answer: yes or no, with '
            "what it passes through",
            [["yes", ["Bob"]]],
        ),
        (
            "Do Ann and Bob live in the same town?",
            'the Town nodes reached both from the Person "Ann" and from the Person "Bob": from each, follow '
            "LIVES_IN to a Town; answer: yes or no, with what it finds",
            [["yes", ["Ashby"]]],
        ),
        (  # two roles tie for the most people: both are the answer, the rest show how close it came
            "Which role do the most people have?",
            "every Person; answer: the value of role the most of them hold, ties included, and how many",
            [["nurse", 2], ["teacher", 2], ["pilot", 1]],
        ),
        (  # Dunmore, where nobody lives, counts as 0: (2 + 2 + 1 + 0) / 4
            "On average, how many people live in each town?",
            "from every Town, follow LIVES_IN backwards (from Town to Person); answer: how many each Town reaches, "
            "on average",
            [[1.25]],
        ),
        (  # the third place is tied three ways: all of them
            "Which 3 people know the most people?",
            "from every Person, follow KNOWS to a Person; answer: the 3 Person nodes that reach the most, ties "
            "included, and how many",
            [["Ann", 2], ["Cat", 2], ["Bob", 1], ["Dan", 1], ["Eve", 1]],
        ),
        (
            "Which 2 towns have the fewest people living in them?",
            "from every Town, follow LIVES_IN backwards (from Town to Person); answer: the 2 Town nodes that reach "
            "the fewest, ties included, and how many",
            [["Colne", 1], ["Ashby", 2], ["Brill", 2]],
        ),
        (  # within a named thing: the towns the walk from it passes, by the people beyond each
            "Which town in the North has the most people living in it?",
            'from the Region "North", follow IN_REGION backwards (from Region to Town), then LIVES_IN backwards '
            "(from Town to Person); answer: the Town that reaches the most, and how many",
            [["Ashby", 2], ["Brill", 2], ["Dunmore", 0]],
        ),
        (  # "Northern" is the North's; a town where nobody lives has the fewest
            "Which Northern town has the fewest people living in it?",
            'from the Region "North", follow IN_REGION backwards (from Region to Town), then LIVES_IN backwards '
            "(from Town to Person); answer: the Town that reaches the fewest, and how many",
            [["Dunmore", 0], ["Ashby", 2], ["Brill", 2]],
        ),
        (  # a connection of three steps: every node it passes through, in order, one row per way
            "How is Dan connected to the North?",
            'the Person and Town nodes between the Person "Dan" and the Region "North": from the first, follow '
            "KNOWS to a Person, then LIVES_IN to a Town, then IN_REGION to a Region; answer: their names",
            [["Ann", "Ashby"]],
        ),
        (  # "how old": no key named, the age the sentence means
            "How old is Ann?",
            'the Person "Ann" itself; answer: their age',
            [["Ann", 31]],
        ),
        (  # two named things, each with a walk of its own to what both reach
            "Which people that Ann knows live in the North?",
            'the Person nodes reached from the Person "Ann" (follow KNOWS to a Person) and also from the Region '
            '"North" (follow IN_REGION backwards (from Region to Town), then LIVES_IN backwards (from Town to '
            "Person)); answer: their names",
            [["Bob"], ["Cat"]],
        ),
        (  # ... and what one reaches that the other's walk does not: the NOT holds a walk of two steps
            "Which person that Cat knows does not live in the North?",
            'the Person nodes reached from the Person "Cat" (follow KNOWS to a Person) and NOT from the Region '
            '"North" (follow IN_REGION backwards (from Region to Town), then LIVES_IN backwards (from Town to '
            "Person)); answer: their names",
            [["Dan"]],
        ),
        (
            "Which 2 towns have the highest population?",
            "every Town; answer: the 2 Town nodes with the highest population, ties included",
            [["Ashby", 1200], ["Brill", 800]],
        ),
        (  # stored as Dan knows Ann: the relationship between two named things is read either way
            "How many years have Ann and Dan known each other?",
            'the Person nodes between the Person "Ann" and the Person "Dan": from the first, follow KNOWS to a '
            "Person; answer: their KNOWS years",
            [["Dan", 7]],
        ),
        (
            "Whom has Cat known for more than 2 years?",
            'from the Person "Cat", follow KNOWS to a Person; only those whose KNOWS years is above "2"; answer: '
            "their names",
            [["Eve"]],
        ),
        (
            "What is the total number of years Ann has known people?",
            'from the Person "Ann", follow KNOWS to a Person; answer: the total KNOWS years',
            [[11]],
        ),
        (
            "How many relationships lie on the shortest path between Ann and Eve?",
            'how many relationships lie between the Person "Ann" and the Person "Eve"; answer: the number',
            [[2]],
        ),
    ],
)
async def test_code_ranks_the_program_the_question_means_first(
    falkordb_url: str, graph_name: str, question: str, line: str, rows: list[list[Any]]
) -> None:
    async with people(falkordb_url, graph_name, choosing(line)) as world:
        choice = await world.choose(question)
        assert choice.chosen == 0 and not choice.overrules_code  # shown first: code's ranking
        assert await world.rows(choice) == rows


async def test_the_highest_by_a_property_the_question_names(falkordb_url: str, graph_name: str) -> None:
    line = "every Town; answer: the Town with the highest population"
    async with people(falkordb_url, graph_name, choosing(line)) as world:
        choice = await world.choose("Which town has the highest population?")
        assert (await world.rows(choice))[0] == ["Ashby", 1200]


async def test_none_answers_and_a_reply_that_chooses_nothing_shown(falkordb_url: str, graph_name: str) -> None:
    question = "Who do the people Ann knows know?"
    async with people(falkordb_url, graph_name, replying(json.dumps({"reading": "", "program": 0}))) as world:
        none = await world.choose(question)
        assert none.chosen is None and none.query == "" and none.overrules_code and none.candidates
    async with people(falkordb_url, graph_name, choosing("no such program")) as world:  # replies program 99
        with pytest.raises(ProgramChoiceError, match="chose program 99, not one of the 6 shown"):
            await world.choose(question)
    async with people(falkordb_url, graph_name, replying("I think the second one")) as world:
        with pytest.raises(ProgramChoiceError, match="not a choice of program"):
            await world.choose(question)
        with pytest.raises(ProgramChoiceError, match="no program to choose from"):
            await choose_program(question, {}, [], world.backends)
