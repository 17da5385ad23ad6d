"""`agent_overrides_pending`: how many runs wait for a human right now, as Temporal's visibility store counts
them, so the number survives worker restarts and counts runs waiting on other workers too."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge
from temporalio.testing import WorkflowEnvironment

from contracts.override import Override
from tests.agent_harness import open_harness, plan, responder
from tests.scripted_llm import ScriptedLLM
from worker.pending_overrides import PENDING_QUERY, UNKNOWN, count_pending_overrides

NEVER_FOUND = "MATCH (n:Entity {name: 'Nobody'}) RETURN n.name"


def pending_gauge() -> tuple[Gauge, CollectorRegistry]:
    registry = CollectorRegistry()
    return Gauge("pending", "runs waiting", registry=registry), registry


async def settles_at(registry: CollectorRegistry, value: float, timeout_s: float = 20) -> bool:
    """The gauge reads `value` (as /metrics would show it) within `timeout_s`."""
    for _ in range(int(timeout_s / 0.1)):
        if registry.get_sample_value("pending") == value:
            return True
        await asyncio.sleep(0.1)
    return False


async def test_the_gauge_counts_a_waiting_run_until_a_human_decides(
    temporal_env: WorkflowEnvironment, seed_graph: str, falkordb_url: str, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        llm = stack.enter_context(
            ScriptedLLM(responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""))
        )
        harness = await open_harness(
            stack,
            temporal_env.client,
            llm.base_url,
            falkordb_url,
            seed_graph,
            tmp_path / "audit.jsonl",
            max_retries=0,
            search_attributes=True,
        )
        # Only this test's runs: the dev server is shared with other tests that may leave runs waiting.
        query = f'{PENDING_QUERY} AND TaskQueue = "{harness.config.queues.workflow}"'
        gauge, registry = pending_gauge()
        counting = asyncio.create_task(count_pending_overrides(temporal_env.client, gauge, every_s=0.2, query=query))
        try:
            assert await settles_at(registry, 0)
            handle = await harness.start("Who is the partner of Entity X?")
            await harness.wait_for_override(handle)
            assert await settles_at(registry, 1)
            await handle.execute_update("submit_override", Override(step_id="s1", decision="skip"))
            await handle.result()
            assert await settles_at(registry, 0)
        finally:
            counting.cancel()


async def test_the_gauge_says_unknown_while_temporal_cannot_count(temporal_env: WorkflowEnvironment) -> None:
    gauge, registry = pending_gauge()
    gauge.set(3)  # a number from before the outage must not stay on the dashboard
    counting = asyncio.create_task(
        count_pending_overrides(temporal_env.client, gauge, every_s=0.2, query="NoSuchAttribute = true")
    )
    try:
        assert await settles_at(registry, UNKNOWN)
    finally:
        counting.cancel()
