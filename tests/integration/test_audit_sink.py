"""The audit trail on a real filesystem: owner-only, and a sink that fails or hangs never holds up a run;
its records are written, in order, once the sink recovers."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from temporalio.client import WorkflowFailureError

from contracts.run import AgentRunResult
from service.agent_metrics import AgentMetrics
from service.audit_sink import AuditSink
from tests.agent_harness import plan, responder


def sink_at(path: Path, **kwargs: float) -> tuple[AuditSink, CollectorRegistry]:
    registry = CollectorRegistry()
    return AuditSink(path, AgentMetrics(registry), **{"retry_first_s": 0.05, **kwargs}), registry  # type: ignore[arg-type]


def sample(registry: CollectorRegistry, name: str) -> float:
    return registry.get_sample_value(name) or 0.0


async def eventually(check, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def test_the_trail_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    sink, _ = sink_at(tmp_path / "audit" / "trail.jsonl")
    assert await sink.write('{"run": 1}')
    assert stat.S_IMODE(os.stat(sink.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sink.path.parent).st_mode) == 0o700
    assert sink.path.read_text() == '{"run": 1}\n'


async def test_runs_ending_back_to_back_each_write_their_record_at_once(tmp_path: Path) -> None:
    # Busy workers end runs back to back: a write that has just finished must not count as one still
    # hanging (its thread may not have exited yet), or healthy records pile up in the backlog.
    sink, registry = sink_at(tmp_path / "trail.jsonl")
    written = [await sink.write(f'{{"run": {n}}}') for n in range(300)]
    assert all(written), f"{written.count(False)} of 300 records queued although the sink is healthy"
    assert sink.pending == 0 and sample(registry, "agent_audit_write_failures_total") == 0
    assert len(sink.path.read_text().splitlines()) == 300
    await sink.aclose()


async def test_a_failing_sink_queues_records_and_writes_them_in_order_once_it_recovers(tmp_path: Path) -> None:
    path = tmp_path / "trail.jsonl"
    path.mkdir()  # the sink cannot open its file: an OSError on every write
    sink, registry = sink_at(path)
    assert not await sink.write('{"run": 1}')
    assert not await sink.write('{"run": 2}')
    assert sink.pending == 2 and sample(registry, "agent_audit_pending_records") == 2
    assert sample(registry, "agent_audit_write_failures_total") >= 1
    path.rmdir()  # the volume is back
    await eventually(lambda: sink.pending == 0)
    assert path.read_text() == '{"run": 1}\n{"run": 2}\n'
    assert await sink.write('{"run": 3}')
    assert path.read_text().splitlines() == ['{"run": 1}', '{"run": 2}', '{"run": 3}']
    assert sample(registry, "agent_audit_pending_records") == 0
    await sink.aclose()


async def test_the_backlog_is_bounded_and_says_what_it_dropped(tmp_path: Path) -> None:
    path = tmp_path / "trail.jsonl"
    path.mkdir()
    sink, registry = sink_at(path, max_pending=2, retry_first_s=60)
    for n in range(3):
        await sink.write(f'{{"run": {n}}}')
    assert sink.pending == 2 and sample(registry, "agent_audit_dropped_records_total") == 1
    path.rmdir()
    await sink.aclose()  # the worker stopping tries once more
    assert path.read_text() == '{"run": 1}\n{"run": 2}\n'


async def test_a_hung_sink_costs_a_run_its_write_timeout_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "trail.jsonl"
    os.mkfifo(path)  # opening a FIFO for writing blocks until someone reads: a hung mount, for real
    sink, registry = sink_at(path, write_timeout_s=0.2, retry_first_s=60)
    written = await asyncio.wait_for(sink.write('{"run": 1}'), timeout=5)
    assert not written and sink.pending == 1 and sample(registry, "agent_audit_write_failures_total") == 1
    # While that write hangs, no second thread is stuck behind it: the next attempt fails at once.
    assert not await asyncio.wait_for(sink._try_append(['{"run": 2}']), timeout=1)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(open(path, encoding="utf-8")))  # unblocks the writer
    reader.start()
    reader.join(timeout=5)
    assert lines == ['{"run": 1}\n']
    path.unlink()  # the mount is replaced by a working volume
    await sink.aclose()
    assert path.read_text() == '{"run": 1}\n'  # the timed-out write may land twice (docs/operations.md); here once more


async def test_a_run_whose_audit_sink_fails_still_ends_with_its_answer(
    harness_factory, seed_graph: str, tmp_path: Path
) -> None:
    (tmp_path / "audit.jsonl").mkdir()  # the harness's audit file cannot be opened
    query = "MATCH (e:Entity) RETURN e.name AS name"
    harness = await harness_factory(
        responder(
            [plan(("s1", "GraphQuery", {"query": query}, []))],
            text=lambda b: "",
            answer="Entity X, Entity Y, Entity Z, Entity W",
        ),
        seed_graph,
    )
    result: AgentRunResult = await asyncio.wait_for((await harness.start("Which entities exist?")).result(), 60)
    assert result.error is None and harness.messages[-1].message_type == "answer"
    assert harness.metric("agent_audit_write_failures_total") >= 1
    assert harness.metric("agent_audit_pending_records") == 1
    (tmp_path / "audit.jsonl").rmdir()
    await eventually(lambda: harness.metric("agent_audit_pending_records") == 0)
    [record] = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert record["request"]["question"] == "Which entities exist?"


async def test_a_run_whose_messages_cannot_be_delivered_fails_and_its_audit_record_says_so(
    harness_factory, seed_graph: str, tmp_path: Path
) -> None:
    query = "MATCH (e:Entity) RETURN e.name AS name"
    harness = await harness_factory(
        responder(
            [plan(("s1", "GraphQuery", {"query": query}, []))],
            text=lambda b: "",
            answer="Entity X, Entity Y, Entity Z, Entity W",
        ),
        seed_graph,
    )
    harness.refusal = "topic not found"
    with pytest.raises(WorkflowFailureError):
        await asyncio.wait_for((await harness.start("Which entities exist?")).result(), 60)
    assert harness.messages == []
    await eventually(lambda: (tmp_path / "audit.jsonl").exists())
    [record] = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert record["request"]["question"] == "Which entities exist?"
    assert any("not every message reached the response topic" in n and "topic not found" in n for n in record["notes"])
