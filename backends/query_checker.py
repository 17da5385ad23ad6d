"""cypher-guardrail's schema and property checks, asked of a process of their own
(backends/query_checker_process.py) so that the worker never loads the library and the pandas it brings.

One child per worker process, shared by every SchemaCheck in it, started on first use and again after it
dies. Its replies are matched to requests by id, so concurrent activities share it; it checks one query at
a time (0.4-4 ms each). A child that dies under a check (killed, out of memory) is replaced and the check
asked again once; one that does not answer within `timeout_s` is killed, and that check fails with
QueryCheckerUnavailable, which fails the activity and lets Temporal retry it.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import structlog

log = structlog.get_logger(__name__)

CHECK_TIMEOUT_S = 30.0  # a check takes milliseconds; this only catches a child that hangs
READ_LIMIT = 1 << 24  # bytes of one reply line (the findings of one query)
CLOSE_WAIT_S = 5.0
PROJECT_ROOT = Path(__file__).resolve().parent.parent  # where `backends` is importable from

Check = Literal["schema", "properties"]


class QueryCheckerUnavailable(RuntimeError):
    """The checking process died or hung; the check was not done."""


class QueryCheckerHung(QueryCheckerUnavailable):
    """The checking process did not answer in time (and was killed): the query is not asked again."""


@dataclass(frozen=True)
class SchemaFacts:
    """A graph's schema as the checks need it: each label's property keys, the (from, type, to) relationships,
    each relationship type's property keys."""

    nodes: dict[str, list[str]]
    rels: set[tuple[str, str, str]]
    rel_props: dict[str, list[str]]
    graph: str

    def as_json(self) -> dict[str, Any]:
        return {
            "nodes": {label: sorted(keys) for label, keys in sorted(self.nodes.items())},
            "rels": sorted(self.rels),
            "rel_props": {rel: sorted(keys) for rel, keys in sorted(self.rel_props.items())},
            "graph": self.graph,
        }

    @cached_property
    def key(self) -> str:
        """The same schema has the same key: the child builds a snapshot once per schema, not per refresh."""
        return hashlib.sha256(json.dumps(self.as_json(), sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class _Child:
    process: asyncio.subprocess.Process
    loop: asyncio.AbstractEventLoop
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    gone: bool = False


class QueryChecker:
    def __init__(self, timeout_s: float = CHECK_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._child: _Child | None = None
        self._ids = itertools.count(1)
        self._start: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    @property
    def pid(self) -> int | None:
        """The checking process, while one runs."""
        return self._child.process.pid if self._child is not None and not self._child.gone else None

    async def start(self) -> None:
        """Start the checking process now rather than at the first check (~1 s: it imports pandas)."""
        await self._running()

    async def findings(self, facts: SchemaFacts, check: Check, query: str) -> list[dict[str, Any]]:
        """What the library finds wrong with `query` against the schema: its findings as it reports them
        (each a dict with a `code` and the names involved). ValueError when the library cannot read the query."""
        for attempt in (1, 2):
            try:
                reply = await self._ask({"schema": facts.key, "check": check, "query": query})
                if reply.get("missing"):
                    await self._ask({"schema": facts.key, "load": facts.as_json()})
                    reply = await self._ask({"schema": facts.key, "check": check, "query": query})
                if reply.get("missing"):
                    raise QueryCheckerUnavailable("the checking process lost the schema it was just given")
                return list(reply["found"])
            except QueryCheckerUnavailable as e:
                if attempt == 2 or isinstance(e, QueryCheckerHung):
                    raise
                log.warning("query_checker_retry", reason=str(e))
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        child, self._child = self._child, None
        if child is None or child.gone:
            return
        child.gone = True
        if child.process.stdin is not None:
            child.process.stdin.close()
        try:
            await asyncio.wait_for(child.process.wait(), CLOSE_WAIT_S)
        except TimeoutError:
            child.process.kill()
            await child.process.wait()
        if child.reader is not None:
            await asyncio.gather(child.reader, return_exceptions=True)

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        child = await self._running()
        request_id = next(self._ids)
        reply: asyncio.Future[dict[str, Any]] = child.loop.create_future()
        child.pending[request_id] = reply
        try:
            assert child.process.stdin is not None
            child.process.stdin.write((json.dumps({"id": request_id, **request}) + "\n").encode())
            await child.process.stdin.drain()
            answer = await asyncio.wait_for(reply, self.timeout_s)
        except (BrokenPipeError, ConnectionResetError) as e:
            self._lost(child, f"its input closed ({e})")
            raise QueryCheckerUnavailable("the checking process is gone") from e
        except TimeoutError as e:
            log.error("query_checker_hung", pid=child.process.pid, timeout_s=self.timeout_s, request=request)
            child.process.kill()
            self._lost(child, "it did not answer in time")
            raise QueryCheckerHung(f"the checking process did not answer within {self.timeout_s:g} s") from e
        finally:
            child.pending.pop(request_id, None)
        if "error" in answer:
            raise ValueError(f"the query check failed: {answer['error']}")
        return answer

    async def _running(self) -> _Child:
        loop = asyncio.get_running_loop()
        if self._start is None or self._start[0] is not loop:
            self._start = (loop, asyncio.Lock())  # a lock belongs to one event loop
        async with self._start[1]:
            child = self._child
            if child is not None and not child.gone and child.loop is loop:
                return child
            if child is not None and not child.gone:  # started on an event loop that is no longer running
                child.process.kill()
                self._lost(child, "its event loop ended")
            self._child = child = await self._spawn(loop)
            return child

    async def _spawn(self, loop: asyncio.AbstractEventLoop) -> _Child:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH")) if p),
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "backends.query_checker_process",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            limit=READ_LIMIT,
        )
        child = _Child(process, loop)
        child.reader = loop.create_task(self._read(child))
        log.info("query_checker_started", pid=process.pid)
        return child

    async def _read(self, child: _Child) -> None:
        assert child.process.stdout is not None
        reason = "it exited"
        try:
            while line := await child.process.stdout.readline():
                reply = json.loads(line)
                waiting = child.pending.get(reply.get("id"))
                if waiting is not None and not waiting.done():
                    waiting.set_result(reply)
        except (ValueError, asyncio.LimitOverrunError) as e:  # a reply that is not one line of JSON
            reason = f"it sent an unreadable reply ({e})"
            child.process.kill()
        finally:
            self._lost(child, reason)

    def _lost(self, child: _Child, reason: str) -> None:
        """The child can answer nothing more: every check waiting on it fails, and the next one starts another."""
        if not child.gone:
            child.gone = True
            log.warning("query_checker_lost", pid=child.process.pid, reason=reason, waiting=len(child.pending))
        if self._child is child:
            self._child = None
        for waiting in child.pending.values():
            if not waiting.done():
                waiting.set_exception(QueryCheckerUnavailable(f"the checking process ended: {reason}"))


_shared: QueryChecker | None = None


def shared_checker() -> QueryChecker:
    """The process's one checker: every SchemaCheck shares its child process."""
    global _shared
    if _shared is None:
        _shared = QueryChecker()
    return _shared
