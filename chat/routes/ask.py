"""POST /chat/stream: ask the agent, and stream the run it starts."""

from __future__ import annotations

import structlog
from fastapi import APIRouter, HTTPException, Request
from sse_starlette.sse import EventSourceResponse

from chat.dependencies import Deps, Who
from chat.event_stream import sse_response, stream_events, stream_slot
from chat.models import ChatRequest
from chat.ownership import new_conversation_id, new_request_id, owns_conversation
from contracts.wire import AgentRequest

log = structlog.get_logger(__name__)
router = APIRouter()


@router.post("/chat/stream", summary="Ask; stream the run as server-sent events")
async def chat_stream(body: ChatRequest, request: Request, who: Who, deps: Deps) -> EventSourceResponse:
    if body.conversation_id and not owns_conversation(who, body.conversation_id):
        log.warning("http_conversation_refused", who=who.name, conversation_id=body.conversation_id)
        raise HTTPException(
            403,
            f"conversation {body.conversation_id} is not {who.name}'s: continue one this "
            "API started for you (its id is the first event of a new conversation)",
        )
    conversation_id = body.conversation_id or new_conversation_id(who)
    slot = stream_slot(deps, who)
    try:
        # The caller the API authenticated is the requester: whose action it would start and who may not
        # approve it.
        stream = await deps.streams.ask(
            AgentRequest(question=body.query, conversation_id=conversation_id, streaming=True, user=who.name),
            new_request_id(who),
        )
    except BaseException:
        slot.give_back()
        raise
    log.info("chat_asked", who=who.name, conversation_id=conversation_id, workflow_id=stream.workflow_id)
    first = {
        "type": "conversation_id",
        "id": conversation_id,
        "workflow_id": stream.workflow_id,
        "temporal_ui": deps.ui_link(stream.workflow_id),
    }
    return sse_response(stream_events(deps, stream, 0, request, first), slot)
