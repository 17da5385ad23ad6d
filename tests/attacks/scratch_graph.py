"""What the read-only check's attack tests watch: a small scratch graph in the real FalkorDB that a query may
change (every node, relationship, index and constraint compared, and FalkorDB's own write counters read), and
a local listener that counts every connection a LOAD CSV URL pointed at it makes. FalkorDB 4.16 fetches https
URLs only (http is "Unsupported URI"), so the listener counts connections, a TLS handshake included, rather
than answering HTTP: any connection is a fetch that happened."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

SEED = [
    "CREATE (a:Seed {name: 'a', n: 1})-[:LINKS {w: 1}]->(b:Seed {name: 'b', n: 2}), (:Person {name: 'p'})",
    "CALL db.idx.fulltext.createNodeIndex('Person', 'name')",
    "CREATE INDEX FOR (s:Seed) ON (s.n)",
]
SNAPSHOT = [
    "MATCH (n) RETURN labels(n), properties(n)",
    "MATCH (a)-[r]->(b) RETURN type(r), properties(r), properties(a), properties(b)",
    # not the indexes' status and counters, which FalkorDB updates in the background
    "CALL db.indexes() YIELD label, properties, types, entitytype RETURN label, properties, types, entitytype",
    "CALL db.constraints()",
]
# The statistics FalkorDB reports for every query; any other ("Nodes created: 1", "Indices deleted: 1") is a write.
READ_STATISTICS = ("Cached execution", "Query internal execution time")


@dataclass(frozen=True)
class Outcome:
    """A query run with GRAPH.QUERY: its rows, or FalkorDB's error, and the write counters it reported."""

    rows: list[Any] | None
    error: str | None
    writes: list[str]


class ScratchGraph:
    """A graph of three nodes, one relationship, a full-text and a range index, which queries are run against
    with GRAPH.QUERY (not the read-only command): a write the check lets through lands here."""

    def __init__(self, url: str, name: str) -> None:
        self.conn = aioredis.Redis.from_url(url)
        self.name = name
        self.pristine: tuple[Any, ...] = ()

    async def create(self) -> None:
        await self.drop()
        for query in SEED:
            await self.conn.execute_command("GRAPH.QUERY", self.name, query)
        self.pristine = await self.snapshot()

    async def drop(self) -> None:
        try:
            await self.conn.execute_command("GRAPH.DELETE", self.name)
        except ResponseError:
            pass  # not there yet

    async def aclose(self) -> None:
        await self.drop()
        await self.conn.aclose()

    async def snapshot(self) -> tuple[Any, ...]:
        found = []
        for query in SNAPSHOT:
            reply = await self.conn.execute_command("GRAPH.RO_QUERY", self.name, query, "--compact")
            found.append(tuple(sorted(json.dumps(row, default=repr) for row in reply[1])))
        return tuple(found)

    async def changed(self) -> bool:
        return await self.snapshot() != self.pristine

    async def run(self, query: str, timeout_ms: int = 2000) -> Outcome:
        try:
            reply = await self.conn.execute_command("GRAPH.QUERY", self.name, query, "--compact", "TIMEOUT", timeout_ms)
        except ResponseError as exc:
            return Outcome(rows=None, error=str(exc), writes=[])
        statistics = [line.decode() for line in reply[-1]]
        writes = [line for line in statistics if not line.startswith(READ_STATISTICS)]
        return Outcome(rows=reply[1] if len(reply) == 3 else [], error=None, writes=writes)


class FetchListener:
    """A TCP listener on 127.0.0.1 that accepts and closes every connection at once (so a fetch fails fast)
    and counts them."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url(self, path: str = "x.csv", scheme: str = "https") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/{path}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return  # closed
            self.connections += 1  # counted before the close FalkorDB's fetch waits on
            conn.close()

    def close(self) -> None:
        try:
            self._socket.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept (a bare close may not)
        except OSError:
            pass
        self._socket.close()
