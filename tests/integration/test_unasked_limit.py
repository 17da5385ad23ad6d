"""A LIMIT the question never asked for (tools/unasked_limit.py), on the real FalkorDB's procurement graph: a
list question's rows that stopped exactly at the query's LIMIT are read again without it, and the step says
so; a question that asks for a number of rows, or for the top of a ranking, keeps its LIMIT."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest_asyncio

from backends import Backends
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput
from tests.tool_calls import ToolCalls, local_backends

SUPPLIERS = "MATCH (s:Supplier) RETURN s.name AS supplier ORDER BY supplier LIMIT 3"


@pytest_asyncio.fixture
async def backends(falkordb_url: str) -> AsyncIterator[Backends]:
    made = local_backends(falkordb_url=falkordb_url)
    yield made
    await made.aclose()


def asked(question: str, query: str) -> StepInput:
    return StepInput(question=question, step=ExecutionStep(id="s1", function="GraphQuery", arguments={"query": query}))


async def test_a_list_cut_at_a_limit_the_question_never_asked_for_is_read_whole(backends: Backends) -> None:
    assert backends.graph is not None
    every = (await backends.graph.ro_query("MATCH (s:Supplier) RETURN count(s)")).rows[0][0]
    assert every > 3  # the demo graph has more suppliers than the LIMIT keeps
    out = await ToolCalls(backends).GraphQuery(asked("Which suppliers are there?", SUPPLIERS))
    assert out.success and len(json.loads(out.output)["rows"]) == every
    assert "stopped at LIMIT 3, which the question does not ask for" in out.confidence.reasoning


async def test_a_limit_the_question_asks_for_stays(backends: Backends) -> None:
    for question in ("Which three suppliers come first by name?", "Which supplier has the most orders?"):
        out = await ToolCalls(backends).GraphQuery(asked(question, SUPPLIERS))
        assert out.success and len(json.loads(out.output)["rows"]) == 3, question
        assert "LIMIT" not in out.confidence.reasoning
