"""One typed client for an agent run through Temporal, used by every caller (the bridge, the chat, the
CLI): the run's status, the override it waits on, a human's decision; and a conversation's memory. The
handler names are contracts/names.Handlers, the same the workflows declare."""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionDescription

from contracts.conversation import ConversationMemory, conversation_workflow_id
from contracts.names import Handlers
from contracts.override import Override, OverrideRequest
from contracts.run import RunStatus


class AgentRun:
    """One ConfidenceAgentWorkflow, by its workflow id. Temporal's RPCError when there is no such run."""

    def __init__(self, temporal: Client, workflow_id: str) -> None:
        self.id = workflow_id
        self._handle = temporal.get_workflow_handle(workflow_id)

    async def describe(self) -> WorkflowExecutionDescription:
        return await self._handle.describe()

    async def status(self) -> RunStatus:
        """The `status` query: phase, steps and any pending override."""
        return await self._handle.query(Handlers.STATUS, result_type=RunStatus)

    async def pending_override(self) -> OverrideRequest | None:
        """The override request the run waits on now, if any."""
        return (await self.status()).pending_override

    async def submit_override(self, decision: Override) -> str:
        """The `submit_override` update: the run's answer (e.g. "accept recorded for step s1"); a refusal raises
        WorkflowUpdateFailedError, whose cause the validator worded (overrides.checks.refusal_reason)."""
        return str(await self._handle.execute_update(Handlers.SUBMIT_OVERRIDE, decision))


async def conversation_memory(temporal: Client, conversation_id: str) -> ConversationMemory:
    """The `memory` query of a conversation's workflow (RPCError when there is none)."""
    handle = temporal.get_workflow_handle(conversation_workflow_id(conversation_id))
    return await handle.query(Handlers.MEMORY, result_type=ConversationMemory)
