"""The HTTP chat API and the browser UI. A client of the same machinery as every other caller: chat messages
go to the agent as TrustGraph AgentRequests over Pulsar (chat/runs.py), and runs, overrides and
conversations are read and answered through Temporal. docs/http-api.md describes every route; FastAPI
serves the OpenAPI docs at /docs."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import structlog
from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette.sse import EventSourceResponse
from starlette.background import BackgroundTask
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from activities.action_history import ActionHistory, HistoryEntry, UndoOutcome
from chat.auth import Authenticator, Caller, Unauthorized
from chat.events import StreamState, confidence_event, events_of, is_final, override_event
from chat.ownership import (
    may_read_conversation,
    may_read_run,
    new_conversation_id,
    new_request_id,
    owns_conversation,
)
from chat.runs import RunStream, RunStreams
from chat.same_site import SameSiteOnly
from chat.stream_slots import StreamSlot, StreamSlots, TooManyStreams
from contracts.conversation import ConversationMemory
from contracts.names import WORKFLOW_NAME
from contracts.override import Decision, Override, OverrideIdentity, Role
from contracts.run import AgentRunResult, RunStatus
from contracts.wire import AgentRequest
from overrides.checks import refusal_reason, signed_decision
from overrides.undo_policy import undo_refusal
from service.run_client import AgentRun, conversation_memory
from service.run_recovery import RunLookup

log = structlog.get_logger(__name__)
STATIC = Path(__file__).with_name("static")
POLL_S = 1.0  # how often a stream asks the run whether it waits for a human
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"


class ChatRequest(BaseModel):
    """Seed 002's chat request. Without a conversation id a new conversation starts; its id is the first event."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=8000)
    conversation_id: str | None = Field(default=None, pattern=ID_PATTERN)


class OverrideBody(BaseModel):
    """A human's decision on the step a run waits on (the caller is recorded as who decided)."""

    model_config = ConfigDict(extra="forbid")
    step_id: str = Field(min_length=1, max_length=64)
    decision: Decision
    arguments: dict[str, str] | None = None
    reason: str = Field(default="", max_length=2000)


class RunView(BaseModel):
    workflow_id: str
    execution: str  # Temporal's view: RUNNING, COMPLETED, FAILED, ...
    status: RunStatus
    temporal_ui: str = ""


@dataclass
class ChatDeps:
    temporal: Client
    streams: RunStreams
    auth: Authenticator
    namespace: str = "default"
    temporal_ui_url: str = ""
    actions: ActionHistory | None = None
    override_keys: list[OverrideIdentity] | None = None  # the workers' identities: decisions must be signed
    hosts: set[str] | None = None  # Host names answered (chat/same_site.py); None: any
    origins: list[str] = field(default_factory=list)  # other sites' origins allowed to call from a browser
    streams_open: StreamSlots = field(default_factory=lambda: StreamSlots(total=64, per_caller=8))
    stream_max_s: float = 900.0  # a stream ends after this; the client continues from its last event id
    runs: RunLookup = field(init=False)  # where a stream takes the messages the response topic dropped

    def __post_init__(self) -> None:
        self.runs = RunLookup(self.temporal)


def caller(request: Request, authorization: Annotated[str | None, Header()] = None) -> Caller:
    """Every route's dependency: who is calling (401 without a valid token when tokens are configured)."""
    try:
        who = request.app.state.deps.auth.caller(authorization)
    except Unauthorized as exc:
        log.warning("http_unauthorized", method=request.method, path=request.url.path, reason=str(exc))
        raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
    log.info("http_request", who=who.name, method=request.method, path=request.url.path)
    return who


Who = Annotated[Caller, Depends(caller)]


def temporal_failure(exc: RPCError, missing: str) -> HTTPException:
    """404 naming what is missing when Temporal has no such workflow; 503 when Temporal itself failed."""
    if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
        return HTTPException(404, f"no {missing}")
    return HTTPException(503, f"Temporal: {exc.message}")


def create_app(deps: ChatDeps) -> FastAPI:
    app = FastAPI(title="tg-confidence-agent chat API", version="1",
                  description="Ask the confidence-controlled agent, watch its runs, answer its questions.")
    app.state.deps = deps
    app.add_middleware(SameSiteOnly, hosts=deps.hosts, origins=deps.origins)

    def ui_link(workflow_id: str) -> str:
        base = deps.temporal_ui_url.rstrip("/")
        return f"{base}/namespaces/{deps.namespace}/workflows/{workflow_id}" if base else ""

    async def run_status(workflow_id: str, who: Caller) -> RunView:
        """The run, when it is an agent run this caller may read; 404 alike for missing and not theirs."""
        run = AgentRun(deps.temporal, workflow_id)
        try:
            description = await run.describe()
            if description.workflow_type != WORKFLOW_NAME:  # a conversation or batch has no agent status
                raise HTTPException(404, f"no run {workflow_id}")
            status = await run.status()
        except RPCError as exc:
            raise temporal_failure(exc, f"run {workflow_id}") from None
        if not may_read_run(who, workflow_id, status):
            log.warning("http_run_refused", who=who.name, workflow_id=workflow_id)
            raise HTTPException(404, f"no run {workflow_id}")
        execution = description.status.name if description.status else "UNKNOWN"
        return RunView(workflow_id=workflow_id, execution=execution, status=status, temporal_ui=ui_link(workflow_id))

    def stream_slot(who: Caller) -> StreamSlot:
        try:
            return deps.streams_open.take(who.name)
        except TooManyStreams as exc:
            log.warning("http_stream_refused", who=who.name, reason=str(exc))
            raise HTTPException(429, str(exc), headers={"Retry-After": "5"}) from None

    def event_stream(events_: AsyncIterator[dict[str, str]], slot: StreamSlot) -> EventSourceResponse:
        async def bounded() -> AsyncIterator[dict[str, str]]:
            try:
                async for event in events_:
                    yield event
            finally:
                slot.give_back()
        return EventSourceResponse(bounded(), ping=15, background=BackgroundTask(slot.give_back))

    async def events(stream: RunStream, after: int, request: Request,
                     first: dict[str, Any] | None = None) -> AsyncIterator[dict[str, str]]:
        """The run's events from message `after` on; each SSE id is the count of messages sent so far, so a
        client that reconnects (Last-Event-ID, or ?after=) continues where it was."""
        state = StreamState(answering=any(m.message_type == "answer" and m.content for m in stream.messages[:after]))
        if first is not None:
            yield {"data": json.dumps(first), "id": str(after)}
        index, waiting_on, polled_at = after, "", 0.0
        ends_at = time.monotonic() + deps.stream_max_s
        while time.monotonic() < ends_at:  # then it ends; the client continues from its last event id
            while index < len(stream.messages):
                message = stream.messages[index]
                index += 1
                for event in events_of(message, state):
                    yield {"data": json.dumps(event), "id": str(index)}
                if is_final(message):
                    async for event in closing(stream.workflow_id):
                        yield {"data": json.dumps(event), "id": str(index)}
                    return
            if stream.finished:  # a client that came back after the last message: only the closing is left
                async for event in closing(stream.workflow_id):
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
                    log.warning("message_recovered_from_temporal", workflow_id=stream.workflow_id,
                                message_type=message.message_type, delivery_id=message.delivery_id)
            if outcome.status is None:
                continue
            pending = outcome.status.pending_override
            if pending is not None and pending.step_id != waiting_on:
                waiting_on = pending.step_id
                yield {"data": json.dumps(override_event(stream.workflow_id, pending)), "id": str(index)}
            elif pending is None and waiting_on:
                yield {"data": json.dumps({"type": "override_resolved", "step_id": waiting_on}), "id": str(index)}
                waiting_on = ""

    async def closing(workflow_id: str) -> AsyncIterator[dict[str, Any]]:
        try:
            status = await AgentRun(deps.temporal, workflow_id).status()
            yield confidence_event(status)
        except RPCError as exc:
            log.warning("final_status_unavailable", workflow_id=workflow_id, error=exc.message)
        yield {"type": "done", "workflow_id": workflow_id}

    @app.post("/chat/stream", summary="Ask; stream the run as server-sent events")
    async def chat_stream(body: ChatRequest, request: Request, who: Who) -> EventSourceResponse:
        if body.conversation_id and not owns_conversation(who, body.conversation_id):
            log.warning("http_conversation_refused", who=who.name, conversation_id=body.conversation_id)
            raise HTTPException(403, f"conversation {body.conversation_id} is not {who.name}'s: continue one this "
                                     "API started for you (its id is the first event of a new conversation)")
        conversation_id = body.conversation_id or new_conversation_id(who)
        slot = stream_slot(who)
        try:
            # The caller the API authenticated is the requester: whose action it would start and who may not
            # approve it.
            stream = await deps.streams.ask(AgentRequest(question=body.query, conversation_id=conversation_id,
                                                         streaming=True, user=who.name), new_request_id(who))
        except BaseException:
            slot.give_back()
            raise
        log.info("chat_asked", who=who.name, conversation_id=conversation_id, workflow_id=stream.workflow_id)
        first = {"type": "conversation_id", "id": conversation_id, "workflow_id": stream.workflow_id,
                 "temporal_ui": ui_link(stream.workflow_id)}
        return event_stream(events(stream, 0, request, first), slot)

    @app.get("/runs/{workflow_id}/events", summary="Stream a run's events (again, from where a client left)")
    async def run_events(workflow_id: str, request: Request, who: Who,
                         after: Annotated[int, Query(ge=0)] = 0,
                         last_event_id: Annotated[str | None, Header()] = None) -> EventSourceResponse:
        view = await run_status(workflow_id, who)
        slot = stream_slot(who)
        stream = deps.streams.find(workflow_id)
        if stream is None and view.execution != "RUNNING":
            return event_stream(finished_run(workflow_id), slot)
        stream = stream or deps.streams.follow(workflow_id)
        start = int(last_event_id) if last_event_id and last_event_id.isascii() and last_event_id.isdigit() \
            else after  # isdigit alone takes "²", which int() refuses
        return event_stream(events(stream, min(start, len(stream.messages)), request), slot)

    async def finished_run(workflow_id: str) -> AsyncIterator[dict[str, str]]:
        """A run this process no longer holds the messages of: its answer, from Temporal."""
        try:
            result = await deps.temporal.get_workflow_handle(workflow_id).result(result_type=AgentRunResult)
            event = ({"type": "content", "content": result.answer} if result.answer
                     else {"type": "error", "content": result.error or "the run ended without an answer"})
        except Exception as exc:  # a failed or terminated run: say so
            event = {"type": "error", "content": f"the run ended without an answer: {exc}"}
        yield {"data": json.dumps(event)}
        async for closing_event in closing(workflow_id):
            yield {"data": json.dumps(closing_event)}

    @app.get("/runs/{workflow_id}", response_model=RunView, summary="A run's state (the `status` query)")
    async def get_run(workflow_id: str, who: Who) -> RunView:
        return await run_status(workflow_id, who)

    @app.post("/runs/{workflow_id}/override", summary="Answer the step a run waits on (update submit_override)")
    async def override(workflow_id: str, body: OverrideBody, who: Who) -> dict[str, str]:
        view = await run_status(workflow_id, who)
        pending = view.status.pending_override
        if pending is None or pending.step_id != body.step_id:
            waiting = f"it waits on step {pending.step_id}" if pending else "it waits on no step"
            raise HTTPException(409, f"{workflow_id} is not waiting on step {body.step_id} ({waiting})")
        if not who.may(pending.role):
            log.warning("http_override_refused", who=who.name, workflow_id=workflow_id, role=pending.role.value)
            raise HTTPException(403, f"{who.name} may not decide this: the role '{pending.role.value}' is needed")
        decision = Override(step_id=body.step_id, decision=body.decision.value, arguments=body.arguments,
                            reason=body.reason, by=who.name)
        if deps.override_keys:  # the workers check signatures: sign over this request's challenge
            try:
                private = who.private_key()
            except (OSError, ValueError) as exc:
                raise HTTPException(500, f"cannot read {who.name}'s signing key: {exc}") from None
            if private is None:
                raise HTTPException(403, f"{who.name} has no signing key configured (http_tokens[].signing_key)")
            decision = signed_decision(decision, private, workflow_id, pending.challenge)
        try:
            outcome = await AgentRun(deps.temporal, workflow_id).submit_override(decision)
        except WorkflowUpdateFailedError as exc:
            raise HTTPException(409, f"override rejected: {refusal_reason(exc.cause)}") from None
        except RPCError as exc:
            raise HTTPException(503, f"Temporal: {exc.message}") from None
        log.info("http_override", who=who.name, workflow_id=workflow_id, step_id=body.step_id,
                 decision=body.decision.value)
        return {"outcome": str(outcome)}

    @app.get("/conversations/{conversation_id}", response_model=ConversationMemory,
             summary="A conversation's memory")
    async def conversation(conversation_id: str, who: Who) -> ConversationMemory:
        if not may_read_conversation(who, conversation_id):
            log.warning("http_conversation_refused", who=who.name, conversation_id=conversation_id)
            raise HTTPException(404, f"no conversation {conversation_id}")
        try:
            return await conversation_memory(deps.temporal, conversation_id)
        except RPCError as exc:
            raise temporal_failure(exc, f"conversation {conversation_id}") from None

    def history() -> ActionHistory:
        if deps.actions is None:
            raise HTTPException(404, "no actions are configured on this service (no ontology)")
        return deps.actions

    @app.get("/actions", response_model=list[HistoryEntry], summary="Executed actions, most recent first")
    async def list_actions(who: Who, run: str = "", entity: str = "",
                           limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> list[HistoryEntry]:
        if not who.may(Role.AUDIT):
            log.warning("http_actions_refused", who=who.name)
            raise HTTPException(403, f"{who.name} may not read the action history: the role 'audit' is needed")
        return await history().list(run_id=run, entity_id=entity, limit=limit)

    @app.post("/actions/{key}/undo", response_model=UndoOutcome, summary="Apply an executed action's inverse")
    async def undo(key: str, who: Who) -> UndoOutcome:
        actions = history()
        if not who.may(Role.UNDO):
            raise HTTPException(403, f"{who.name} may not undo actions: the role 'undo' is needed")
        refused = undo_refusal(deps.override_keys or [], who.name,
                               Path(who.signing_key) if who.signing_key else None)
        if refused:
            raise HTTPException(403, refused)
        entries = [e for e in await actions.list(key=key, limit=1) if not e.undoes]
        if not entries:
            raise HTTPException(404, f"no executed action with key {key}")
        if entries[0].undone_by:
            raise HTTPException(409, f"{key} was already undone ({entries[0].undone_by})")
        outcome = await actions.undo(entries[0], who.name)
        log.info("http_undo", who=who.name, key=key, success=outcome.success, detail=outcome.detail)
        if not outcome.success:
            raise HTTPException(409, outcome.detail)
        return outcome

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    return app

