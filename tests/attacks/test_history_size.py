"""A caller who may decide overrides tries to grow a run past Temporal's limits: retry after retry (each one
more tool call and output in the history), megabyte-long fields in updates, and signals the run must
refuse (a refused signal used to be listed whole in the `status`, a query answer gRPC caps at 4 MB).
The extra retries and the oversized fields are refused with their reason, the status still answers and
stays small, nothing the run writes comes near the payload limits, and the run still ends with an answer
(real Temporal dev server, FalkorDB; the LLM scripted)."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from contracts.names import Activities
from contracts.override import Override
from contracts.run import AgentRunResult, RunStatus
from overrides.checks import refusal_reason
from tests.agent_harness import open_harness, plan, responder
from tests.scripted_llm import ScriptedLLM
from tests.seeded_graph import seeded_graph

BIG_TEXT = "lorem ipsum " * 1200  # ~14 KB: each attempt's output is about the most a step's may be (16 KB)
MEGABYTE = "x" * (1024 * 1024)
WARNING_PAYLOAD = 256 * 1024  # Temporal warns above this per payload (and refuses 2 MB)
HUMAN_RETRIES = 3  # the worker's max_human_retries (its default)


async def next_request(handle: WorkflowHandle, after: str, timeout_s: float = 60) -> RunStatus:
    """The status once the run asks a human again (a challenge other than `after`)."""
    for _ in range(int(timeout_s / 0.1)):
        status = await handle.query("status", result_type=RunStatus)
        if status.pending_override is not None and status.pending_override.challenge != after:
            return status
        await asyncio.sleep(0.1)
    raise TimeoutError("the run asked no human")


async def refused(handle: WorkflowHandle, override: Override) -> str:
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await handle.execute_update("submit_override", override)
    return refusal_reason(caught.value.cause)


def payload_sizes(event: Any) -> list[int]:
    """The size of every payload an event carries (inputs, results, details), found by walking its fields."""
    sizes: list[int] = []

    def walk(message: Any) -> None:
        for field, value in message.ListFields():
            if field.message_type is None:
                continue
            # One message, a map of them (headers, memo fields) or a repeated field (payloads).
            items = (
                [value]
                if hasattr(value, "ListFields")
                else list(value.values())
                if hasattr(value, "values")
                else list(value)
            )
            for item in (item for item in items if hasattr(item, "ListFields")):
                if field.message_type.name == "Payload":
                    sizes.append(item.ByteSize())
                else:
                    walk(item)

    walk(event)
    return sizes


async def test_a_human_cannot_grow_a_run_past_temporals_limits(
    temporal_env: WorkflowEnvironment, falkordb_url: str, unique: str, tmp_path: Path
) -> None:
    query = "MATCH (d:Document) RETURN d.body AS body"
    async with AsyncExitStack() as stack:
        graph = await stack.enter_async_context(
            seeded_graph(falkordb_url, f"history-{unique}", f"CREATE (:Document {{body: '{BIG_TEXT}'}})")
        )
        llm = stack.enter_context(
            ScriptedLLM(
                responder(
                    [plan(("s1", "GraphQuery", {"query": query}, []))],
                    text=lambda b: "",
                    answer="The document says lorem ipsum.",
                )
            )
        )
        # Every GraphQuery result is below its threshold: each attempt ends with a human asked.
        harness = await open_harness(
            stack,
            temporal_env.client,
            llm.base_url,
            falkordb_url,
            graph,
            tmp_path / "audit.jsonl",
            max_retries=0,
            tool_thresholds={"GraphQuery": 1.0},
        )
        handle = await harness.start("What does the document say?")
        status = await next_request(handle, after="")

        # Oversized fields in the update: refused by its validator, with the field and the limit named.
        for field in ("by", "reason"):
            reason = await refused(handle, Override(step_id="s1", decision="retry", **{field: MEGABYTE}))
            assert f"the override's {field} is {len(MEGABYTE)} characters long" in reason
        reason = await refused(handle, Override(step_id="s1", decision="retry", arguments={"query": MEGABYTE}))
        assert "argument 'query' is" in reason and "at most" in reason

        # The same through the signal, which has no validator: ignored, listed clipped.
        for _ in range(3):
            await handle.signal("override", Override(step_id=MEGABYTE, decision="accept"))

        # Retry after retry: the worker allows HUMAN_RETRIES, then retry is no longer a choice.
        for _ in range(HUMAN_RETRIES):
            assert status.pending_override is not None and "retry" in status.pending_override.choices
            await handle.execute_update("submit_override", Override(step_id="s1", decision="retry", by="ops"))
            status = await next_request(handle, after=status.pending_override.challenge)
        assert status.pending_override is not None and "retry" not in status.pending_override.choices
        reason = await refused(handle, Override(step_id="s1", decision="retry", by="ops"))
        assert "retry is no longer a choice for step s1" in reason and "max_human_retries" in reason
        await handle.signal("override", Override(step_id="s1", decision="retry", by="ops"))

        # The status still answers, small, with every refused signal counted and each listed entry clipped.
        for _ in range(100):
            status = await handle.query("status", result_type=RunStatus)
            if status.rejected_overrides_total == 4:
                break
            await asyncio.sleep(0.1)
        assert status.rejected_overrides_total == 4
        assert "retry is no longer a choice" in status.rejected_overrides[-1]
        assert all(len(entry) < 1000 for entry in status.rejected_overrides)
        assert len(status.model_dump_json()) < 64 * 1024

        await handle.execute_update("submit_override", Override(step_id="s1", decision="accept", by="ops"))
        result: AgentRunResult = await asyncio.wait_for(handle.result(), 120)

    assert result.error is None and result.answer.startswith("The document says lorem ipsum.")
    history = await handle.fetch_history()
    attempts = [
        e for e in history.events if e.activity_task_scheduled_event_attributes.activity_type.name == "GraphQuery"
    ]
    assert len(attempts) == 1 + HUMAN_RETRIES
    # Nothing the run wrote comes near the payload limits; the only big payloads are the signals' own input.
    written = [
        size
        for e in history.events
        if not e.HasField("workflow_execution_signaled_event_attributes")
        for size in payload_sizes(e)
    ]
    assert max(written) < WARNING_PAYLOAD
    # The record of the run (an activity's input, kept in the history) holds no attempt's output.
    record = next(
        e
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == Activities.RECORD_RUN
    )
    assert "lorem ipsum lorem" not in record.activity_task_scheduled_event_attributes.input.payloads[0].data.decode()
