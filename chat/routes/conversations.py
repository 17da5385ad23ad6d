"""GET /conversations/{conversation_id}: a conversation's memory."""

from __future__ import annotations

import structlog
from fastapi import APIRouter, HTTPException
from temporalio.service import RPCError

from chat.dependencies import Deps, Who
from chat.ownership import may_read_conversation
from chat.run_access import temporal_failure
from contracts.conversation import ConversationMemory
from service.run_client import conversation_memory

log = structlog.get_logger(__name__)
router = APIRouter()


@router.get("/conversations/{conversation_id}", response_model=ConversationMemory, summary="A conversation's memory")
async def conversation(conversation_id: str, who: Who, deps: Deps) -> ConversationMemory:
    if not may_read_conversation(who, conversation_id):
        log.warning("http_conversation_refused", who=who.name, conversation_id=conversation_id)
        raise HTTPException(404, f"no conversation {conversation_id}")
    try:
        return await conversation_memory(deps.temporal, conversation_id)
    except RPCError as exc:
        raise temporal_failure(exc, f"conversation {conversation_id}") from None
