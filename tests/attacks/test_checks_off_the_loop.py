"""An activity's checks of a query the model wrote (or of a question) ran on the event loop that every activity of
its worker shares: while one ran, no other activity was served (no heartbeat sent, no reply from FalkorDB or the
model read). A graph step ran the read-only check and the clause-order repairs back to back there, then the
schema's repairs, the row cap, the reading of walks and grounding's matching, each over the whole query. These
checks now run on a worker thread (service/off_loop.py), a few thread hops per activity.

Each case runs the real graph step activity in Temporal's activity environment, against the real FalkorDB and its
schema checker, while a ticker on the same event loop measures the longest time the loop went unserved: it must
be under a third of what one read-only check of that query takes in place (it was all of it, and more), in the
better of two runs. The query is long: a step's query comes from the planner (at most 4,000 characters), a repair
(a completion, at most 32 KB) or the query form, but the activity does not bound what it is given, and the longer
the text, the clearer a check's stall stands out from the interpreter's switching between threads (every 5 ms)
on a busy machine. Nothing here is mocked."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from temporalio.testing import ActivityEnvironment

from contracts.query_path import StepOutput
from cypher.read_only import refusals
from tests.tool_calls import call, local_backends
from tools import registry

QUESTION = "Which suppliers are named Acme Industrial or one of the others listed?"
# A read the model could write: one name the graph holds, then thousands more to compare (about 120 KB).
LONG_READ = (
    "MATCH (s:Supplier) WHERE s.name = 'Acme Industrial'"
    + "".join(f" OR s.name = 'Supplier number {i}'" for i in range(3_500))
    + " RETURN s.name AS supplier ORDER BY supplier"
)
LONG_WRITE = LONG_READ + " CREATE (:Intruder)"  # a write at its very end: refused before anything runs
SHARE = 3  # the loop's longest stall must be under a third of one read-only check in place (it was all of it)
RUNS = 2  # the step is run this many times: a stall the machine's other work caused once is not the step's


class LoopWatch:
    """A ticker on this event loop, asking to run again every millisecond: the longest it waited is the longest
    the loop went unserved."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.longest = 0.0
        self.ticks = 0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest, self.last, self.ticks = max(self.longest, now - self.last), now, self.ticks + 1

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(0.001)
            self._tick()

    @asynccontextmanager
    async def watching(self) -> AsyncIterator[LoopWatch]:
        ticker = asyncio.create_task(self._run())
        await asyncio.sleep(0.01)
        self.longest, self.ticks = 0.0, 0
        try:
            yield self
        finally:
            self._tick()  # the wait still open when the activity returned counts too
            ticker.cancel()


def in_place_s(query: str) -> float:
    """The fastest of three read-only checks of `query` in place: the least that one stretch of a graph step held
    the loop when its checks ran there."""
    fastest = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        refusals(query)
        fastest = min(fastest, time.perf_counter() - started)
    return fastest


@pytest.mark.parametrize(
    ("query", "runs"), [(LONG_WRITE, False), (LONG_READ, True)], ids=["a long write, refused", "a long read, run"]
)
async def test_the_event_loop_keeps_serving_while_a_graph_step_checks_a_long_query(
    falkordb_url: str, query: str, runs: bool
) -> None:
    backends = local_backends(falkordb_url=falkordb_url)  # no model: nothing here asks one
    backends.form_when_doubted = False  # no cross-check by the query form: the step's own checks only
    activity = registry.activities(backends, ["GraphQuery"])[0]

    async def step(query: str) -> StepOutput:
        request = call("GraphQuery", query=query)
        request.question = QUESTION
        return await ActivityEnvironment().run(activity, request)

    try:
        await step("MATCH (s:Supplier) RETURN s.name LIMIT 1")  # connected, schema read, checker started
        # A full collection of the test process's heap holds the interpreter whichever thread allocates: it is
        # not what is measured here.
        gc.collect()
        gc.freeze()
        stalls = []
        for _ in range(RUNS):
            async with LoopWatch().watching() as watch:
                out = await step(query)
            stalls.append(watch.longest)
    finally:
        gc.unfreeze()
        await backends.aclose()
    assert out.success is runs, out.output[:300]
    check_s, stall = in_place_s(query), min(stalls)
    assert stall < check_s / SHARE, (
        f"the event loop went {stall * 1000:.1f} ms unserved while a graph step checked a query of {len(query)} "
        f"characters (the least of {RUNS} runs); one read-only check of it takes {check_s * 1000:.1f} ms in place"
    )
