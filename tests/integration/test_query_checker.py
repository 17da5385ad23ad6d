"""The query checks run in a process of their own (backends/query_checker.py): the worker never loads
cypher-guardrail or pandas, concurrent checks get their own answers, and a checking process that dies or
hangs costs at most the check it was doing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.graph_store import GraphStore
from backends.query_checker import QueryChecker, QueryCheckerHung, SchemaFacts
from backends.schema_check import SchemaCheck
from tests.seeded_graph import seeded_graph

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = SchemaFacts(
    nodes={"Author": ["name"], "Book": ["title", "pages"]},
    rels={("Author", "WROTE", "Book")},
    rel_props={},
    graph="library",
)
BACKWARDS = "MATCH (b:Book)-[:WROTE]->(a:Author) RETURN a.name"
UNKNOWN_LABEL = "MATCH (m:Magazine) RETURN m.title"


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def codes(findings: list[dict[str, object]]) -> list[str]:
    return [str(f["code"]).rsplit(".", 1)[-1] for f in findings]


@pytest.fixture
async def checker():  # type: ignore[no-untyped-def]
    own = QueryChecker(timeout_s=5)
    yield own
    await own.aclose()


async def test_findings_come_back_from_the_checking_process(checker: QueryChecker) -> None:
    assert codes(await checker.findings(LIBRARY, "schema", BACKWARDS)) == ["WrongDirectionPath"]
    assert codes(await checker.findings(LIBRARY, "schema", UNKNOWN_LABEL)) == ["UnknownLabel"]
    assert codes(await checker.findings(LIBRARY, "properties", "MATCH (a:Author) RETURN a.pages")) == [
        "InvalidPropertyAccess"
    ]
    assert await checker.findings(LIBRARY, "schema", "MATCH (a:Author)-[:WROTE]->(b:Book) RETURN b.title") == []
    assert checker.pid is not None and checker.pid != os.getpid()


async def test_concurrent_checks_each_get_their_own_answer(checker: QueryChecker) -> None:
    other = SchemaFacts(
        nodes={"City": ["name"], "Country": ["name"]}, rels={("City", "IN", "Country")}, rel_props={}, graph="places"
    )
    asks = [
        (LIBRARY, BACKWARDS, ["WrongDirectionPath"]),
        (LIBRARY, UNKNOWN_LABEL, ["UnknownLabel"]),
        (other, "MATCH (c:Country)-[:IN]->(t:City) RETURN t", ["WrongDirectionPath"]),
        (other, "MATCH (t:City)-[:IN]->(c:Country) RETURN t.name", []),
    ] * 25
    found = await asyncio.gather(*(checker.findings(facts, "schema", query) for facts, query, _ in asks))
    assert [codes(f) for f in found] == [expected for _, _, expected in asks]


async def test_a_killed_checking_process_is_replaced_and_the_check_answered(checker: QueryChecker) -> None:
    await checker.findings(LIBRARY, "schema", BACKWARDS)
    first = checker.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    await asyncio.sleep(0.2)
    assert codes(await checker.findings(LIBRARY, "schema", BACKWARDS)) == ["WrongDirectionPath"]
    assert checker.pid not in (None, first)


async def test_a_checking_process_killed_under_concurrent_checks_loses_none_of_them(checker: QueryChecker) -> None:
    await checker.start()
    first = checker.pid
    assert first is not None
    os.kill(first, signal.SIGSTOP)  # requests queue in the pipe, unanswered, until it dies
    asks = asyncio.gather(*(checker.findings(LIBRARY, "schema", BACKWARDS) for _ in range(10)))
    await asyncio.sleep(0.3)
    os.kill(first, signal.SIGKILL)
    assert [codes(f) for f in await asks] == [["WrongDirectionPath"]] * 10  # each asked again, once
    assert checker.pid not in (None, first)


async def test_a_hung_checking_process_fails_that_check_and_the_next_one_gets_a_new_process() -> None:
    checker = QueryChecker(timeout_s=1)
    try:
        await checker.start()
        hung = checker.pid
        assert hung is not None
        os.kill(hung, signal.SIGSTOP)
        with pytest.raises(QueryCheckerHung, match="did not answer"):
            await checker.findings(LIBRARY, "schema", BACKWARDS)
        assert codes(await checker.findings(LIBRARY, "schema", BACKWARDS)) == ["WrongDirectionPath"]
        assert checker.pid not in (None, hung)
        await asyncio.sleep(0.2)
        assert gone(hung)
    finally:
        await checker.aclose()


async def test_the_checking_process_ends_when_the_checker_closes() -> None:
    checker = QueryChecker()
    await checker.start()
    pid = checker.pid
    assert pid is not None
    await checker.aclose()
    assert checker.pid is None
    assert gone(pid)


def test_the_checking_process_ends_when_its_worker_is_killed() -> None:
    """SIGKILL leaves no chance to close anything: the child sees its input close and exits."""
    script = (
        "import asyncio\nfrom backends.query_checker import QueryChecker\n"
        "async def main():\n    c = QueryChecker()\n    await c.start()\n    print('child', c.pid, flush=True)\n"
        "    await asyncio.sleep(600)\nasyncio.run(main())\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = next(int(line.split()[1]) for line in parent.stdout if line.startswith("child "))
        assert not gone(child)
    finally:
        parent.kill()
        parent.wait()
    for _ in range(100):
        if gone(child):
            break
        time.sleep(0.1)
    assert gone(child)


def test_the_worker_never_loads_the_checking_library(falkordb_url: str) -> None:
    """The point of the separate process: cypher-guardrail brings pandas (~46 MB of the worker's memory)."""
    script = (
        "import asyncio, sys\nimport worker.main\nfrom backends.graph_store import GraphStore\n"
        "from backends.schema_check import SchemaCheck\n"
        "async def main():\n"
        f"    check = SchemaCheck(GraphStore({falkordb_url!r}, 'procurement'))\n"
        "    print(await check.problems('MATCH (s:Suplier) RETURN s'))\n"
        "    await check.checker.aclose()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in ('pandas', 'numpy', 'cypher_guardrail') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    problems, loaded = done.stdout.strip().splitlines()[-2:]
    assert "there is no label Suplier" in problems
    assert loaded == "[]"


async def test_schema_checks_on_two_graphs_share_one_process(falkordb_url: str, unique: str) -> None:
    async with seeded_graph(
        falkordb_url, f"shelf-{unique}", "CREATE (:Shelf {name: 'A'})-[:HOLDS]->(:Box {n: 1})"
    ) as shelf:
        shop, shelves = GraphStore(falkordb_url, "procurement"), GraphStore(falkordb_url, shelf)
        try:
            on_shop, on_shelves = SchemaCheck(shop), SchemaCheck(shelves)
            assert on_shop.checker is on_shelves.checker
            assert await on_shelves.problems("MATCH (b:Box)-[:HOLDS]->(s:Shelf) RETURN s.name") == [
                "(b:Box)-[:HOLDS]->(s:Shelf) goes against the relationship's direction: "
                "write (b:Box)<-[:HOLDS]-(s:Shelf)"
            ]
            assert await on_shop.problems("MATCH (b:Box) RETURN b") != []  # no Box in the procurement graph
            assert await on_shelves.problems("MATCH (b:Box) RETURN b") == []
        finally:
            await shop.aclose()
            await shelves.aclose()


async def test_ctrl_c_to_the_process_group_leaves_the_checker_serving_the_draining_worker(
    checker: QueryChecker,
) -> None:
    await checker.findings(LIBRARY, "schema", BACKWARDS)  # started and serving
    pid = checker.pid
    assert pid is not None
    os.kill(pid, signal.SIGINT)
    assert codes(await checker.findings(LIBRARY, "schema", BACKWARDS)) == ["WrongDirectionPath"]
    assert checker.pid == pid
