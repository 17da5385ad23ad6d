"""Read-only access to a FalkorDB property graph: parameterized GRAPH.RO_QUERY and schema discovery.

Nothing here knows the demo domain: the schema (labels, relationship types, property keys, counts)
is read from whatever graph the service is pointed at.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from falkordb import Edge, Node, Path
from falkordb.asyncio import FalkorDB
from falkordb.asyncio.graph import AsyncGraph
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from temporalio.exceptions import ApplicationError

from backends.graph_limits import FALKORDB_LIMITS
from contracts.redaction import redact_text, sanitize, shown_url
from cypher.read_only import refusals
from cypher.row_cap import capped_rows
from service.off_loop import off_loop

SCHEMA_SAMPLE = 200  # nodes per label sampled for property keys
# How long a read schema is reused: reading it costs 2 + 2 x labels queries (~19 ms on the demo graph, most of
# the planning activity's own time at zero LLM delay: BENCHMARKS.md). This process's writes drop it at once.
SCHEMA_TTL_S = 5.0
PATTERN_SAMPLE = 20000  # relationships sampled for (label)-[type]->(label) patterns
EXAMPLE_CHARS = 30  # of a property's example value in the schema, as JSON, after redaction
# A query this short is capped in place (a millisecond or two at most): the reads grounding and the schema make
# are templates of a few hundred characters, many per activity, and a thread hop each would add up. A longer one,
# a model's query, is capped off the event loop.
CAP_IN_PLACE_CHARS = 1_000


@dataclass(frozen=True)
class QueryRows:
    columns: list[str]
    rows: list[list[Any]]
    total_rows: int  # the rows the server sent: a read asks for at most the rows kept + 1 (row_cap.py)

    @property
    def truncated(self) -> bool:
        return self.total_rows > len(self.rows)

    def to_json(self) -> str:
        # A truncated result's full size is unknown (the query was capped): its count is of the rows shown.
        return json.dumps(
            {"columns": self.columns, "rows": self.rows, "row_count": len(self.rows), "truncated": self.truncated},
            default=str,
            separators=(",", ":"),
        )


# Each scalar property of node n as text, one row per property (k, text). FalkorDB's toString() rejects
# lists and maps, and one list-valued property would fail every search: only scalars are read.
BOOKKEEPING_LABELS = ("ActionRecord",)  # the agent's own nodes, not the domain's: no schema, name or value read
PROPERTY_TEXT = (
    "UNWIND keys(n) AS k WITH n, k, n[k] AS v WHERE typeOf(v) IN ['String', 'Integer', 'Float'] "
    "WITH n, k, toString(v) AS text"
)


class GraphQueryError(Exception):
    """The graph rejected the query (syntax, unknown function, write attempt), or the read check refused it
    before it ran: the query's fault."""


def checked_and_capped(query: str, cap: int) -> tuple[str, list[str]]:
    """The query as it will run (its rows capped) and why the read check refuses that text. Checked here, at
    the store's boundary, on the very text sent: whatever rewrote the query before (a lifted LIMIT, a repair)
    cannot make it other than what the check read."""
    capped = capped_rows(query, cap)
    return capped, refusals(capped)


def to_plain(value: Any) -> Any:
    """FalkorDB nodes, edges and paths as JSON-ready dicts."""
    if isinstance(value, Node):
        return {"labels": value.labels or [], **{k: to_plain(v) for k, v in value.properties.items()}}
    if isinstance(value, Edge):
        return {"type": value.relation, **{k: to_plain(v) for k, v in value.properties.items()}}
    if isinstance(value, Path):
        return {"nodes": [to_plain(n) for n in value.nodes()], "edges": [to_plain(e) for e in value.edges()]}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


class GraphStore:
    def __init__(self, url: str, graph_name: str) -> None:
        self.url = url
        self.shown_url = shown_url(url)  # for messages: a password in the URL must not reach a history or log
        self.graph_name = graph_name
        self._db: FalkorDB | None = None
        self._connect_lock = asyncio.Lock()
        self._schema: tuple[float, str] | None = None  # (valid until, on the monotonic clock; the text)
        self._writes = 0  # a schema read while a write ran is not kept

    async def _graph(self) -> AsyncGraph:
        # The client's constructor probes the server synchronously (cluster detection): do it lazily, off
        # the event loop, so a worker starts while FalkorDB is down and its activities retry until it is up.
        async with self._connect_lock:
            if self._db is None:
                self._db = await asyncio.to_thread(FalkorDB.from_url, self.url, socket_connect_timeout=5)
            db = self._db
        assert db is not None  # connected just above (the client is untyped, so mypy cannot tell)
        return db.select_graph(self.graph_name)

    def _unreachable(self, exc: BaseException) -> ApplicationError:
        return ApplicationError(
            f"FalkorDB at {self.shown_url} is unreachable: {redact_text(str(exc))}", type="GraphUnavailable"
        )

    async def aclose(self) -> None:
        if self._db is not None:
            await self._db.aclose()

    async def ro_query(
        self, query: str, params: dict[str, Any] | None = None, *, timeout_ms: int = 10000, max_rows: int = 200
    ) -> QueryRows:
        """A read, its rows capped in the query itself (max_rows + 1: a truncated result still shows it), so
        that the server neither builds nor sends rows that would be dropped here."""
        capped, refused = (
            checked_and_capped(query, max_rows + 1)
            if len(query) <= CAP_IN_PLACE_CHARS
            else await off_loop("the read check and row cap", partial(checked_and_capped, query, max_rows + 1))
        )
        if refused:
            raise GraphQueryError("; ".join(refused))
        return await self._execute(capped, params, timeout_ms, max_rows, write=False)

    async def write_query(self, query: str, params: dict[str, Any], *, timeout_ms: int = 30000) -> QueryRows:
        """A write, for queries generated from ACTION definitions only (never for LLM-written Cypher)."""
        try:
            return await self._execute(query, params, timeout_ms, max_rows=None, write=True)
        finally:
            self._writes += 1
            self._schema = None  # counts, and perhaps properties, changed

    async def _execute(
        self, query: str, params: dict[str, Any] | None, timeout_ms: int, max_rows: int | None, *, write: bool
    ) -> QueryRows:
        try:
            graph = await self._graph()
            run = graph.query if write else graph.ro_query
            # FalkorDB refuses a query that asks for more than its TIMEOUT_MAX: longer asks get the most there is.
            result = await run(query, params, timeout=min(timeout_ms, FALKORDB_LIMITS.timeout_max_ms))
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise self._unreachable(exc) from exc
        except ResponseError as exc:
            raise GraphQueryError(str(exc)) from exc
        columns = [str(h[1]) if isinstance(h, (list, tuple)) else str(h) for h in result.header]
        rows = [[to_plain(v) for v in row] for row in result.result_set[:max_rows]]
        return QueryRows(columns=columns, rows=rows, total_rows=len(result.result_set))

    async def explain_error(self, query: str, timeout_ms: int = 5000) -> str | None:
        """What FalkorDB says is wrong with a query without running it (syntax, unknown functions,
        arity), or None when it would run."""
        try:
            graph = await self._graph()
            await asyncio.wait_for(graph.explain(query), timeout_ms / 1000)
        except (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError) as exc:
            raise self._unreachable(exc) from exc
        except ResponseError as exc:
            return str(exc)
        except Exception as exc:  # the client cannot read the plan it got (an index's DDL has none): not a read
            return f"no plan for this query ({exc})"
        return None

    async def value_exists(self, value: str, mode: str, timeout_ms: int = 5000) -> bool:
        """Does any node hold `value` in any property: equal to it ("exact") or containing it, ignoring case?"""
        condition = "text = $v" if mode == "exact" else "toLower(text) CONTAINS toLower($v)"
        rows = await self.ro_query(
            f"MATCH (n) {PROPERTY_TEXT} WHERE {condition} WITH n LIMIT 1 RETURN count(n)",
            {"v": value},
            timeout_ms=timeout_ms,
        )
        return bool(rows.rows and rows.rows[0][0])

    async def describe_schema(self) -> str:
        """A compact, LLM-readable schema of the graph as it is now (read again after SCHEMA_TTL_S, or at once
        after a write through this store)."""
        cached = self._schema
        if cached is not None and time.monotonic() < cached[0]:
            return cached[1]
        writes = self._writes
        text = await self._read_schema()
        if writes == self._writes:
            self._schema = (time.monotonic() + SCHEMA_TTL_S, text)
        return text

    async def _read_schema(self) -> str:
        # ActionRecord nodes are the agent's own bookkeeping (idempotency keys), not part of the domain.
        labels = [r[0] for r in (await self.ro_query("CALL db.labels()", max_rows=1000)).rows if r[0] != "ActionRecord"]
        if not labels:
            return f"(graph '{self.graph_name}' is empty)"
        patterns = await self.ro_query(
            f"MATCH (a)-[r]->(b) WITH a, r, b LIMIT {PATTERN_SAMPLE} "
            "RETURN labels(a)[0], type(r), labels(b)[0], count(*) ORDER BY count(*) DESC",
            max_rows=200,
        )
        lines = ["Relationships:"]
        lines += [f"- (:{src})-[:{rel}]->(:{dst})" for src, rel, dst, _ in patterns.rows]
        lines.append("Node labels (count): properties, with an example value")
        samples: list[tuple[str, int, list[list[Any]]]] = []
        for label in labels:
            count = (await self.ro_query(f"MATCH (n:`{label}`) RETURN count(n)")).rows[0][0]
            sample = await self.ro_query(
                f"MATCH (n:`{label}`) WITH n LIMIT {SCHEMA_SAMPLE} UNWIND keys(n) AS k "
                "RETURN k, head(collect(n[k])) ORDER BY k",
                max_rows=100,
            )
            samples.append((label, count, sample.rows))
        # The values are whatever the graph holds, of any length: redacted off the event loop, in one hop.
        lines += await off_loop("the schema's example values", partial(_label_lines, samples))
        return "\n".join(lines)


def _label_lines(samples: list[tuple[str, int, list[list[Any]]]]) -> list[str]:
    """Each label's line of the schema: its count and its properties, each with an example value."""
    return [
        f"- {label} ({count}): " + ", ".join(f"{k}={_example(str(k), v)}" for k, v in rows)
        for label, count, rows in samples
    ]


def _example(key: str, value: Any) -> str:
    """A property's example value for the planner's prompt: redacted before it is cut, so that a secret the graph
    stores (a password, a URL's credentials) reaches the prompt neither whole nor in part. A property named like
    a secret (`password`, `api_key`) is redacted whatever its value looks like; the JSON is redacted again for
    what `default=str` made of a value of another type."""
    shown = sanitize({key: value}, include_raw_outputs=True)[key]
    return redact_text(json.dumps(shown, default=str))[:EXAMPLE_CHARS]
