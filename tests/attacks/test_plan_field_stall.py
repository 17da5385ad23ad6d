"""A caller stalls a worker with the request's `plan` field, the request-level settings that workflow code reads
itself: a 256 KB request whose plan field is one key repeating a private key's header (quoted in a note whose
redaction searched from every header to the end: 16 s of a workflow task), JSON nested too deeply to read, and
a number too long for a float. Each used to fail the workflow task, which Temporal retries without end. Now the
bridge refuses a field that long, and a run started with one directly (or with the others) notes what it
ignored and answers (real Temporal dev server and worker, FalkorDB; the LLM scripted)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from contracts.run import AgentRunResult
from contracts.wire_codec import MAX_REQUEST_BYTES, RequestDecodeError, decode_request
from tests.agent_harness import open_harness, plan, responder
from tests.scripted_llm import ScriptedLLM
from tests.seeded_graph import seeded_graph

PLAN_CHARS = 4 * 1024  # the longest plan field the bridge takes and a run reads (contracts/payload_limits.py)
HEADER = "-----BEGIN PRIVATE KEY-----"
# One key of headers: a request just under the bridge's size limit (256 KB).
HEADERS_PLAN = json.dumps({HEADER * ((MAX_REQUEST_BYTES - 1024) // len(HEADER)): 1})
HOSTILE_PLANS = {
    "headers": (HEADERS_PLAN, f"the request's plan field is {len(HEADERS_PLAN)} characters; the limit is {PLAN_CHARS}"),
    "nested": ("[" * (PLAN_CHARS - 1), "nested too deeply to read"),
    "long number": ('{"max_retries": 1' + "0" * 400 + "}", "max_retries a number too long to show clamped to 5"),
}
QUERY = "MATCH (w:Widget) RETURN w.name AS name"
ANSWER = "The widget is Sprocket."
RUN_TIMEOUT_S = 90  # a run of one step answers in seconds; a stalled one never does


def test_the_bridge_refuses_a_plan_field_longer_than_settings_need() -> None:
    with pytest.raises(RequestDecodeError, match=f"plan is {len(HEADERS_PLAN)} characters; the limit is {PLAN_CHARS}"):
        decode_request(json.dumps({"question": "Which widget?", "plan": HEADERS_PLAN}).encode())
    assert decode_request(json.dumps({"question": "q", "plan": '{"max_retries": 1}'}).encode()).plan


async def failed_workflow_tasks(handle: WorkflowHandle) -> list[str]:
    """The failure of each workflow task the run's history records as failed."""
    history = await handle.fetch_history()
    return [
        e.workflow_task_failed_event_attributes.failure.message
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]


async def test_a_hostile_plan_field_is_noted_and_the_run_answers(
    temporal_env: WorkflowEnvironment, falkordb_url: str, unique: str, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        graph = await stack.enter_async_context(
            seeded_graph(falkordb_url, f"plan-{unique}", "CREATE (:Widget {name: 'Sprocket'})")
        )
        llm = stack.enter_context(
            ScriptedLLM(responder([plan(("s1", "GraphQuery", {"query": QUERY}, []))], text=lambda b: "", answer=ANSWER))
        )
        harness = await open_harness(
            stack,
            temporal_env.client,
            llm.base_url,
            falkordb_url,
            graph,
            tmp_path / "audit.jsonl",
            confidence_threshold=0.1,
        )
        handles = {
            name: await harness.start("Which widget is there?", plan=field)
            for name, (field, _) in HOSTILE_PLANS.items()
        }
        try:
            results: list[AgentRunResult] = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles.values())), RUN_TIMEOUT_S
            )
        finally:
            stalls = {name: await failed_workflow_tasks(h) for name, h in handles.items()}
            for handle in handles.values():  # a stalled run must not outlive the test's worker
                with contextlib.suppress(RPCError):  # one that completed cannot be terminated
                    await handle.terminate("test over")
    assert stalls == {name: [] for name in HOSTILE_PLANS}
    assert all(r.error is None and r.answer.startswith(ANSWER) for r in results), results
    notes = [m.content for m in harness.messages if m.content.startswith("Request settings: ")]
    for name, (_, note) in HOSTILE_PLANS.items():
        assert any(note in n for n in notes), (name, notes)
    assert max(len(n) for n in notes) < 1024  # a note never quotes the field at length
