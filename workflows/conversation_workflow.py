"""ConversationWorkflow: one per conversation, holding its memory between turns.

Turns (each its own ConfidenceAgentWorkflow) read the memory with the `memory` query at their start and
add themselves with the `remember` signal at their end. The memory is bounded (planning/
conversation_memory.py), the workflow continues as new every SIGNALS_BEFORE_CONTINUE turns so its history stays
short, and it ends after IDLE_TTL_S without a turn: a conversation's memory expires with it.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.conversation import (
        CONVERSATION_WORKFLOW_NAME,
        SIGNALS_BEFORE_CONTINUE,
        ConversationInput,
        ConversationMemory,
        ConversationTurn,
    )
    from contracts.names import Handlers
    from planning.conversation_memory import remember


@workflow.defn(name=CONVERSATION_WORKFLOW_NAME)
class ConversationWorkflow:
    @workflow.init
    def __init__(self, inp: ConversationInput) -> None:
        self._memory = inp.memory or ConversationMemory(conversation_id=inp.conversation_id)
        self._signals = 0
        self._spoken = False  # a turn arrived since the idle clock last started

    @workflow.run
    async def run(self, inp: ConversationInput) -> ConversationMemory:
        while True:
            self._spoken = False
            try:
                await workflow.wait_condition(lambda: self._spoken, timeout=timedelta(seconds=inp.idle_ttl_s))
            except TimeoutError:
                return self._memory  # idle for the whole TTL: the conversation ends
            if self._signals >= SIGNALS_BEFORE_CONTINUE or workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(
                    ConversationInput(
                        conversation_id=inp.conversation_id, memory=self._memory, idle_ttl_s=inp.idle_ttl_s
                    )
                )

    @workflow.signal(name=Handlers.REMEMBER)
    def remember(self, turn: ConversationTurn) -> None:
        self._memory = remember(self._memory, turn)
        self._signals += 1
        self._spoken = True

    @workflow.query(name=Handlers.MEMORY)
    def memory(self) -> ConversationMemory:
        return self._memory
