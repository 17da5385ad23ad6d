"""A run's events as a server-sent event stream: from the messages this process holds (chat/runs.py), from
Temporal when the response topic dropped one or the run waits for a human, and from the run's result when
this process no longer holds its messages. While the run works, its `status` (asked once a second anyway) gives
the page its plan and each step's state; once it ended, its result gives each step's output. Each stream holds
a slot (chat/stream_slots.py) until it ends."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import structlog
from fastapi import HTTPException, Request
from sse_starlette.sse import EventSourceResponse
from starlette.background import BackgroundTask
from temporalio.service import RPCError

from chat.auth import Caller
from chat.dependencies import ChatDeps
from chat.events import StreamState, confidence_event, events_of, is_final, override_event, run_state_event
from chat.runs import RunStream
from chat.stream_slots import StreamSlot, TooManyStreams
from contracts.plan import StepResult
from contracts.run import AgentRunResult
from service.run_client import AgentRun

log = structlog.get_logger(__name__)
POLL_S = 1.0  # how often a stream asks the run whether it waits for a human
# How long the closing events wait for the run's result (its steps' outputs) after its last message: the run
# records itself and returns within a second or so; past this the page goes without the rows.
RESULT_WAIT_S = 3.0


def stream_slot(deps: ChatDeps, who: Caller) -> StreamSlot:
    """A slot for one more stream of this caller's; 429 when the API or the caller has all theirs open."""
    try:
        return deps.streams_open.take(who.name)
    except TooManyStreams as exc:
        log.warning("http_stream_refused", who=who.name, reason=str(exc))
        raise HTTPException(429, str(exc), headers={"Retry-After": "5"}) from None


def sse_response(events: AsyncIterator[dict[str, str]], slot: StreamSlot) -> EventSourceResponse:
    """The events as server-sent events; the slot is given back when they end or the client leaves."""

    async def bounded() -> AsyncIterator[dict[str, str]]:
        try:
            async for event in events:
                yield event
        finally:
            slot.give_back()

    return EventSourceResponse(bounded(), ping=15, background=BackgroundTask(slot.give_back))


async def stream_events(
    deps: ChatDeps, stream: RunStream, after: int, request: Request, first: dict[str, Any] | None = None
) -> AsyncIterator[dict[str, str]]:
    """The run's events from message `after` on; each SSE id is the count of messages sent so far, so a
    client that reconnects (Last-Event-ID, or ?after=) continues where it was."""
    state = StreamState(
        answering=any(m.message_type == "answer" and m.content for m in stream.messages[:after]),
        ontology=deps.actions.tools.ontology if deps.actions is not None else None,
    )
    if first is not None:
        yield {"data": json.dumps(first), "id": str(after)}
    index, waiting_on, polled_at = after, "", 0.0
    shown: dict[str, Any] = {}  # the run_state event sent last: another is sent when the run's state changed
    ends_at = time.monotonic() + deps.stream_max_s
    while time.monotonic() < ends_at:  # then it ends; the client continues from its last event id
        while index < len(stream.messages):
            message = stream.messages[index]
            index += 1
            for event in events_of(message, state):
                yield {"data": json.dumps(event), "id": str(index)}
            if is_final(message):
                async for event in closing_events(deps, stream.workflow_id):
                    yield {"data": json.dumps(event), "id": str(index)}
                return
        if stream.finished:  # a client that came back after the last message: only the closing is left
            async for event in closing_events(deps, stream.workflow_id):
                yield {"data": json.dumps(event), "id": str(index)}
            return
        if await request.is_disconnected():
            return  # the run goes on; the client may come back
        await stream.wait(index, POLL_S)
        if index < len(stream.messages) and time.monotonic() - polled_at < POLL_S:
            continue  # messages first; the status is asked at most once per POLL_S
        polled_at = time.monotonic()
        # The run as Temporal has it: a message the response topic dropped is taken from there
        # (service/run_recovery.py), the closing ones once the run ended, the one that asked for a human
        # while it waits.
        outcome = await deps.runs.outcome(stream.workflow_id)
        if outcome is None or not outcome.execution:
            continue  # Temporal cannot be asked now, or the run is not started yet (the bridge is starting it)
        for message in outcome.handover:
            if stream.add(message):
                log.warning(
                    "message_recovered_from_temporal",
                    workflow_id=stream.workflow_id,
                    message_type=message.message_type,
                    delivery_id=message.delivery_id,
                )
        if outcome.status is None:
            continue
        pending = outcome.status.pending_override
        if pending is not None and pending.step_id != waiting_on:
            waiting_on = pending.step_id
            yield {"data": json.dumps(override_event(stream.workflow_id, pending)), "id": str(index)}
        elif pending is None and waiting_on:
            yield {"data": json.dumps({"type": "override_resolved", "step_id": waiting_on}), "id": str(index)}
            waiting_on = ""
        state_now = run_state_event(outcome.status)
        if state_now != shown:
            shown = state_now
            yield {"data": json.dumps(state_now), "id": str(index)}


async def finished_run_events(deps: ChatDeps, workflow_id: str) -> AsyncIterator[dict[str, str]]:
    """A run this process no longer holds the messages of: its answer, from Temporal."""
    results: list[StepResult] = []
    try:
        handle = deps.temporal.get_workflow_handle(workflow_id, result_type=AgentRunResult)
        result = await handle.result()
        results = result.step_results
        event = (
            {"type": "content", "content": result.answer}
            if result.answer
            else {"type": "error", "content": result.error or "the run ended without an answer"}
        )
    except Exception as exc:  # a failed or terminated run: say so
        event = {"type": "error", "content": f"the run ended without an answer: {exc}"}
    yield {"data": json.dumps(event)}
    async for closing_event in closing_events(deps, workflow_id, results):
        yield {"data": json.dumps(closing_event)}


async def closing_events(
    deps: ChatDeps, workflow_id: str, results: list[StepResult] | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The run's confidence, with its steps' outputs, when Temporal can say, then `done`. `results`: the steps'
    results when the caller has them already; else they are taken from the run's result."""
    try:
        status = await AgentRun(deps.temporal, workflow_id).status()
        yield confidence_event(status, results if results is not None else await step_results(deps, workflow_id))
    except RPCError as exc:
        log.warning("final_status_unavailable", workflow_id=workflow_id, error=exc.message)
    yield {"type": "done", "workflow_id": workflow_id}


async def step_results(deps: ChatDeps, workflow_id: str) -> list[StepResult]:
    """The steps' results of a run that sent its last message, once it returned ([] when it does not return
    within RESULT_WAIT_S, or returned none)."""
    handle = deps.temporal.get_workflow_handle(workflow_id, result_type=AgentRunResult)
    try:
        result = await asyncio.wait_for(handle.result(follow_runs=True), RESULT_WAIT_S)
    except Exception as exc:  # still recording, failed, or Temporal cannot say: the page goes without the rows
        log.info("step_results_unavailable", workflow_id=workflow_id, error=str(exc) or type(exc).__name__)
        return []
    return result.step_results
