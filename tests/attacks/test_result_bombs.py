"""Result bombs: a read query that passes every check (no write, EXPLAIN, schema) but asks for millions of rows,
from a planner's step or a human's `retry`. FalkorDB itself bounds each query's memory, rows and time (the
limits `up` sets, which the fixtures' FalkorDB has too) and the worker caps a read's rows in the query it sends,
so the bomb ends as a clear error or a truncated result; the worker's memory stays flat and it goes on
answering."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from backends.graph_limits import FALKORDB_LIMITS
from contracts.override import Override
from contracts.run import AgentRunResult
from tests.agent_harness import plan, responder
from tests.tool_calls import ToolCalls, call, local_backends

# The attack as first reported: a 30-million-value list, then 30 million rows.
BOMB = "UNWIND range(1, 30000000) AS x RETURN x"
MANY_ROWS = "UNWIND range(1, 3000000) AS x RETURN x"  # fits FalkorDB's memory: 3 million small rows
# A cross product with a LIMIT of its own far above what is kept.
WIDE = "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b RETURN a, b LIMIT 9000000"
NEVER_FOUND = "MATCH (n:Entity {name: 'Nobody'}) RETURN n.name"
ENTITIES = "MATCH (n:Entity) RETURN n.name ORDER BY n.name"
# Peak memory this process (the worker's activities run in it) may gain while a bomb goes off: parsing 3
# million rows costs hundreds of MB, 30 million several GB.
MAX_GROWTH_KB = 150 * 1024


def peak_reset() -> None:
    """Start measuring this process's peak resident memory afresh (Linux: VmHWM back to the current RSS)."""
    Path("/proc/self/clear_refs").write_text("5")


def peak_kb() -> int:
    return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))  # type: ignore[union-attr]


def rss_kb() -> int:
    return int(re.search(r"VmRSS:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))  # type: ignore[union-attr]


async def test_the_fixtures_falkordb_has_the_limits_up_sets(falkordb_url: str) -> None:
    """One definition (backends/graph_limits.py) for `up`, the fixtures and Compose: the bounds below are
    FalkorDB's own, not a test's."""
    conn = aioredis.Redis.from_url(falkordb_url)
    try:
        found = dict(await conn.execute_command("GRAPH.CONFIG", "GET", "*"))
    finally:
        await conn.aclose()
    args = FALKORDB_LIMITS.module_args()
    expected = {name.encode(): int(value) for name, value in zip(args[::2], args[1::2], strict=True)}
    assert {name: found[name] for name in expected} == expected


async def graph_query(falkordb_url: str, graph_name: str, query: str) -> tuple[Any, int]:
    """A planner's GraphQuery step, run as its activity runs it; with this process's peak memory growth (KB)."""
    backends = local_backends(falkordb_url=falkordb_url, graph_name=graph_name)
    try:
        before = rss_kb()
        peak_reset()
        out = await ToolCalls(backends).GraphQuery(call("GraphQuery", query=query))
        grown = peak_kb() - before
        # the same backends answer the next, ordinary query
        after = await ToolCalls(backends).GraphQuery(call("GraphQuery", query=ENTITIES))
    finally:
        await backends.aclose()
    assert after.success, after.error
    assert [r[0] for r in json.loads(after.output)["rows"]] == ["Entity W", "Entity X", "Entity Y", "Entity Z"]
    return out, grown


async def test_a_planners_thirty_million_row_bomb_is_stopped_by_falkordb_with_a_clear_error(
    falkordb_url: str, seed_graph: str
) -> None:
    out, grown = await graph_query(falkordb_url, seed_graph, BOMB)
    assert not out.success and out.deterministic  # the query's own fault: the ladder repairs, never repeats it
    # FalkorDB refuses to build the list (under EXPLAIN already, which folds the constant range)
    assert "mem consumption exceeded capacity" in out.error and "mem consumption" in out.output
    assert grown < MAX_GROWTH_KB, f"the worker grew {grown // 1024} MB"


@pytest.mark.parametrize("query", [MANY_ROWS, WIDE], ids=["no-limit", "own-limit"])
async def test_millions_of_rows_come_back_truncated_not_parsed_whole(
    falkordb_url: str, seed_graph: str, query: str
) -> None:
    out, grown = await graph_query(falkordb_url, seed_graph, query)
    assert out.success, out.error
    result = json.loads(out.output)
    assert result["truncated"] and len(result["rows"]) == result["row_count"] == 200
    assert out.confidence.signals["truncated"] == 1.0 and "more rows than kept" in out.confidence.reasoning
    assert grown < MAX_GROWTH_KB, f"the worker grew {grown // 1024} MB"


def by_question(body: dict[str, Any]) -> bool:
    return "partner" in json.dumps(body)  # the first question; the second asks for the entities


async def test_a_humans_retry_with_a_bomb_gets_a_clear_error_and_the_service_answers_the_next_question(
    harness_factory, seed_graph: str
) -> None:  # type: ignore[no-untyped-def]
    stuck, answers = (
        responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""),
        responder(
            [plan(("s1", "GraphQuery", {"query": ENTITIES}, []))],
            text=lambda b: "",
            answer="Entity W, Entity X, Entity Y and Entity Z.",
        ),
    )
    harness = await harness_factory(
        lambda body: stuck(body) if by_question(body) else answers(body), seed_graph, max_retries=0
    )
    handle = await harness.start("Who is the partner of Entity X?")
    await harness.wait_for_override(handle)
    before = rss_kb()
    peak_reset()
    await handle.execute_update(
        "submit_override", Override(step_id="s1", decision="retry", arguments={"query": BOMB}, by="mallory")
    )
    status = await harness.wait_for_override(handle)  # the bomb failed: the human is asked again
    grown = peak_kb() - before
    assert "mem consumption exceeded capacity" in status["pending_override"]["reasoning"]
    assert grown < MAX_GROWTH_KB, f"the worker grew {grown // 1024} MB"
    await handle.execute_update("submit_override", Override(step_id="s1", decision="skip", by="mallory"))
    result: AgentRunResult = await handle.result()
    assert not result.step_results[0].success

    next_run = await harness.start("Which entities are there?")
    answered: AgentRunResult = await next_run.result()
    assert answered.step_results[0].success and "Entity W" in answered.step_results[0].output
