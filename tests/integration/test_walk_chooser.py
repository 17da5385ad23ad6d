"""The query chosen instead of written (tools/walk_chooser.py): the question is grounded and its schema read
from a real FalkorDB graph, its walks enumerated and put in words, and the (scripted) model, reached through
the real client, picks one by number under the grammar; the chosen walk's query returns the rows the question
asks for. A reply that chooses nothing shown is a clear error."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from backends import Backends
from backends.grounding import ground, shortest_connections
from cypher.intent import IntentError
from cypher.walk_space import candidate_walks
from questions.reading import QuestionReading, read_question
from tests.scripted_llm import ScriptedLLM
from tests.seeded_graph import seeded_graph
from tests.tool_calls import local_backends
from tools.walk_chooser import WalkChoice, WalkChoiceError, choose_walk

# People know people and live in towns; towns lie in regions.
GRAPH = (
    "CREATE (ann:Person {name: 'Ann', age: 31}), (bob:Person {name: 'Bob', age: 45}), "
    "(cat:Person {name: 'Cat', age: 28}), (dan:Person {name: 'Dan', age: 52}), (eve:Person {name: 'Eve', age: 39}), "
    "(north:Region {name: 'North'}), (south:Region {name: 'South'}), "
    "(t1:Town {name: 'Ashby', population: 1200}), (t2:Town {name: 'Brill', population: 800}), "
    "(t3:Town {name: 'Colne', population: 300}), "
    "(ann)-[:KNOWS]->(bob), (ann)-[:KNOWS]->(cat), (bob)-[:KNOWS]->(dan), (cat)-[:KNOWS]->(dan), "
    "(cat)-[:KNOWS]->(eve), (dan)-[:KNOWS]->(ann), (eve)-[:KNOWS]->(bob), "
    "(ann)-[:LIVES_IN]->(t1), (bob)-[:LIVES_IN]->(t1), (cat)-[:LIVES_IN]->(t2), (dan)-[:LIVES_IN]->(t3), "
    "(eve)-[:LIVES_IN]->(t2), (t1)-[:IN_REGION]->(north), (t2)-[:IN_REGION]->(north), (t3)-[:IN_REGION]->(south)"
)
NO_CONDITION = {"key": "", "operator": "=", "value": ""}


def choosing(
    walk_words: str, answer: str = "names", answer_key: str = "", condition: dict[str, str] | None = None
) -> Any:
    """A model that reads the numbered walks in its prompt and picks the one said in `walk_words`."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        walks = body["messages"][-1]["content"].split("Walks:\n", 1)[1]
        numbers = [line.split(". ", 1)[0] for line in walks.splitlines() if line.split(". ", 1)[-1] == walk_words]
        return 200, json.dumps(
            {
                "reading": walk_words[:100],
                "walk": int(numbers[0]) if numbers else 99,
                "answer": answer,
                "answer_key": answer_key,
                "condition": condition or NO_CONDITION,
            }
        )

    return respond


def replying(text: str) -> Any:
    return lambda body: (200, text)


@dataclass
class People:
    backends: Backends
    llm: ScriptedLLM

    async def read(self, question: str) -> tuple[QuestionReading, dict[str, list[str]], set[tuple[str, str, str]]]:
        assert self.backends.graph is not None and self.backends.schema is not None
        facts = await self.backends.schema.facts()
        grounding = await ground(question, self.backends.graph, describe=False)
        return read_question(question, grounding, facts.nodes, facts.rels), facts.nodes, facts.rels

    async def choose(self, question: str, observed: list[tuple[str, ...]] | None = None) -> WalkChoice:
        reading, nodes, rels = await self.read(question)
        walks = candidate_walks(reading, nodes, rels, observed or [])
        return await choose_walk(question, reading, nodes, rels, walks, self.backends)

    async def rows(self, choice: WalkChoice) -> set[tuple[Any, ...]]:
        assert self.backends.graph is not None
        return {tuple(row) for row in (await self.backends.graph.ro_query(choice.query)).rows}


@pytest_asyncio.fixture
async def graph_name(falkordb_url: str, unique: str) -> AsyncIterator[str]:
    async with seeded_graph(falkordb_url, f"walks-{unique}", GRAPH) as name:
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
    two_hops = 'from the Person "Ann", follow KNOWS to a Person, then KNOWS to a Person'
    async with people(falkordb_url, graph_name, choosing(two_hops)) as world:
        choice = await world.choose("Who do the people Ann knows know?")
        assert await world.rows(choice) == {("Dan",), ("Eve",)}  # Ann herself left out
        assert choice.chosen == 0 and choice.candidates[0].types == ("KNOWS", "KNOWS")
        assert choice.reading == two_hops[:100]  # the chain in the model's own words, kept as evidence
        [request] = world.llm.requests
        grammar = request["response_format"]["schema"]
        assert list(grammar["properties"])[:2] == ["reading", "walk"]  # the model says the chain before choosing
        assert grammar["properties"]["walk"]["enum"] == list(range(1, len(choice.candidates) + 1))
        assert request["temperature"] == 0 and f"1. {two_hops}" in request["messages"][-1]["content"]
        assert "- Person: age, name" in request["messages"][0]["content"]  # what answer_key can read
        assert "condition" not in grammar["properties"]  # the question gives no figure: nothing to test


async def test_what_two_named_people_share_and_a_count_against_the_arrow(falkordb_url: str, graph_name: str) -> None:
    both = (
        'the Person nodes reached both from the Person "Ann" and from the Person "Eve": from each, '
        "follow KNOWS to a Person"
    )
    async with people(falkordb_url, graph_name, choosing(both)) as world:
        assert await world.rows(await world.choose("Which people do both Ann and Eve know?")) == {("Bob",)}
    residents = 'from the Town "Ashby", follow LIVES_IN backwards (from Town to Person)'
    async with people(falkordb_url, graph_name, choosing(residents, answer="count")) as world:
        assert await world.rows(await world.choose("How many people live in Ashby?")) == {(2,)}


async def test_the_models_condition_and_answer_key_fill_the_rest(falkordb_url: str, graph_name: str) -> None:
    known = 'from the Person "Ann", follow KNOWS to a Person'
    older = {"key": "age", "operator": ">", "value": "30"}
    async with people(falkordb_url, graph_name, choosing(known, condition=older)) as world:
        choice = await world.choose("Which people that Ann knows are older than 30?")
        assert await world.rows(choice) == {("Bob",)}
        assert "Figures and values it gives: 30" in world.llm.requests[0]["messages"][-1]["content"]
        condition = world.llm.requests[0]["response_format"]["schema"]["properties"]["condition"]
        assert condition["properties"]["value"] == {"enum": ["30"]}  # only what the question gives
    invented = {"key": "age", "operator": ">", "value": "1000"}
    async with people(falkordb_url, graph_name, choosing(known, condition=invented)) as world:
        with pytest.raises(WalkChoiceError, match="tests '1000', which the question does not give"):
            await world.choose("Which people that Ann knows are older than 30?")
    towns = "every Town"
    async with people(falkordb_url, graph_name, choosing(towns, "highest", "population")) as world:
        choice = await world.choose("Which town has the highest population?")
        assert world.backends.graph is not None
        assert (await world.backends.graph.ro_query(choice.query)).rows[0] == ["Ashby", 1200]


async def test_a_connection_the_data_holds(falkordb_url: str, graph_name: str) -> None:
    back = 'from the Person "Ann", follow KNOWS backwards (from Person to Person), arriving at the Person "Dan"'
    async with people(falkordb_url, graph_name, choosing(back)) as world:
        assert world.backends.graph is not None
        question = "How are Ann and Dan connected?"
        first, second = (await ground(question, world.backends.graph, describe=False)).matches[:2]
        paths = await shortest_connections(world.backends.graph, first, second)
        assert paths
        choice = await world.choose(question, observed=[tuple(types) for _, _, types in paths])
        assert choice.candidates[0].kind == "connection" and choice.candidates[0].types == ("KNOWS",)
        assert await world.rows(choice) == {("Dan",)}  # Dan knows Ann: the walk arrives


async def test_a_reply_that_chooses_nothing_shown_is_a_clear_error(falkordb_url: str, graph_name: str) -> None:
    question = "Who do the people Ann knows know?"
    async with people(falkordb_url, graph_name, choosing("no such walk")) as world:  # replies walk 99
        with pytest.raises(WalkChoiceError, match="chose walk 99, not one of the 12 shown"):
            await world.choose(question)
    async with people(falkordb_url, graph_name, replying("I think the second one")) as world:
        with pytest.raises(WalkChoiceError, match="not a choice of walk"):
            await world.choose(question)
    malformed = json.dumps({"reading": "", "walk": 1, "answer": "biggest", "answer_key": "", "condition": NO_CONDITION})
    async with people(falkordb_url, graph_name, replying(malformed)) as world:
        with pytest.raises(WalkChoiceError, match="'biggest' is none of"):
            await world.choose(question)
    unkeyed = json.dumps({"reading": "", "walk": 1, "answer": "highest", "answer_key": "", "condition": NO_CONDITION})
    async with people(falkordb_url, graph_name, replying(unkeyed)) as world:
        with pytest.raises(IntentError, match="needs an answer_key"):
            await world.choose(question)
    async with people(falkordb_url, graph_name, replying("{}")) as world:
        reading, nodes, rels = await world.read(question)
        with pytest.raises(WalkChoiceError, match="no walk to choose from"):
            await choose_walk(question, reading, nodes, rels, [], world.backends)
