"""The conversation memory's two activities, run as local activities of the workflow worker (they need
only its Temporal client): read the memory of a conversation, and add a finished turn to it."""

from __future__ import annotations

import structlog
from temporalio import activity
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode

from contracts.conversation import (
    CONVERSATION_WORKFLOW_NAME,
    ConversationInput,
    ConversationMemory,
    RecallInput,
    RememberInput,
    conversation_workflow_id,
)
from contracts.names import Activities, Handlers

log = structlog.get_logger(__name__)


class ConversationActivities:
    def __init__(self, client: Client) -> None:
        self.client = client

    @activity.defn(name=Activities.RECALL_CONVERSATION)
    async def recall(self, request: RecallInput) -> ConversationMemory:
        """The conversation's memory; empty for a new conversation or one that expired."""
        handle = self.client.get_workflow_handle(conversation_workflow_id(request.conversation_id))
        try:
            description = await handle.describe()
            if description.status != WorkflowExecutionStatus.RUNNING:
                return ConversationMemory(conversation_id=request.conversation_id)
            return await handle.query(Handlers.MEMORY, result_type=ConversationMemory)
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return ConversationMemory(conversation_id=request.conversation_id)
            raise

    @activity.defn(name=Activities.REMEMBER_TURN)
    async def remember(self, request: RememberInput) -> None:
        """Signal-with-start: the first turn starts the conversation's workflow, an expired one starts afresh.
        Safe to retry: the workflow keeps one turn per request id."""
        await self.client.start_workflow(
            CONVERSATION_WORKFLOW_NAME,
            ConversationInput(conversation_id=request.conversation_id),
            id=conversation_workflow_id(request.conversation_id),
            task_queue=request.queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            start_signal=Handlers.REMEMBER,
            start_signal_args=[request.turn],
            static_summary=f"conversation {request.conversation_id}: the memory its turns share",
        )
        log.info("turn_remembered", conversation_id=request.conversation_id, request_id=request.turn.request_id)
