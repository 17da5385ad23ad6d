"""A comment inside a dotted name (`CALL db./* just reading */labels()`, `string.//\\njoin(...)`) stops FalkorDB
4.16 whole: its parser aborts (SIGABRT in `cypher_fparse`), under GRAPH.EXPLAIN as under a query, and every
caller of that graph loses it. A planner's step or a human's retry with one is refused before anything reaches
FalkorDB, which goes on answering. The FalkorDB here is the test's own, started for each query: unchecked, the
query takes it down, and nothing else goes with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from cypher.read_only import refusals
from embedded.parts import falkordb_server
from embedded.processes import free_port
from tests.tool_calls import ToolCalls, call, local_backends

WHY = "a comment inside a dotted name"
QUERIES = [
    "CALL db./* just reading */labels()",
    "CALL db.idx.fulltext//\n.queryNodes('Entity', 'x') YIELD node RETURN node.name",
    "MATCH (n:Entity) RETURN string /* joined */ .join([n.name], ',')",
]


@pytest_asyncio.fixture
async def own_falkordb(tmp_path: Path) -> AsyncIterator[str]:
    port = free_port()
    part = falkordb_server(tmp_path, port)
    part.start()
    try:
        await part.wait_ready(60)
        url = f"redis://127.0.0.1:{port}"
        conn = aioredis.Redis.from_url(url)
        await conn.execute_command("GRAPH.QUERY", "g", "CREATE (:Entity {name: 'Entity X'})")
        await conn.aclose()
        yield url
    finally:
        part.stop()


async def answers(url: str) -> bool:
    conn = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    try:
        return bool(await conn.execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:Entity) RETURN n.name"))
    except (RedisConnectionError, RedisTimeoutError):
        return False
    finally:
        await conn.aclose()


@pytest.mark.parametrize("query", QUERIES, ids=["procedure", "procedure-line-comment", "function"])
async def test_a_comment_inside_a_dotted_name_is_refused_and_falkordb_stays_up(own_falkordb: str, query: str) -> None:
    assert any(WHY in problem for problem in refusals(query)), refusals(query)
    backends = local_backends(falkordb_url=own_falkordb, graph_name="g")
    try:
        out = await ToolCalls(backends).GraphQuery(call("GraphQuery", query=query))
    finally:
        await backends.aclose()
    assert not out.success and out.output.startswith("Query not run: ") and WHY in (out.error or "")
    assert await answers(own_falkordb)

    conn = aioredis.Redis.from_url(own_falkordb, socket_timeout=10)  # what the check kept from FalkorDB
    try:
        await conn.execute_command("GRAPH.EXPLAIN", "g", query)
    except (RedisConnectionError, RedisTimeoutError, ResponseError):
        pass
    finally:
        await conn.aclose()
    assert not await answers(own_falkordb), "FalkorDB no longer stops on this: cypher/parser_faults.py may go"
