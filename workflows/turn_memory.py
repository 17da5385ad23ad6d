"""One turn of a conversation, from the agent workflow's side: read the memory at the start (the request's
own `history`, else the service's memory of its conversation id), read the question in that context, and
add the finished turn to the memory at the end. Memory that cannot be read or written is said in the
run's observations and never fails the turn."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from workflows.errors import LOCAL_ACTIVITY_FAILED, failure_message
from workflows.run_context import RunContext

with workflow.unsafe.imports_passed_through():
    from contracts.conversation import (
        MEMORY_PROMPT_CHARS,
        RESULTS_CHARS,
        ConversationMemory,
        ConversationTurn,
        FollowUpInput,
        FollowUpOutput,
        RecallInput,
        RememberInput,
    )
    from contracts.names import Activities
    from contracts.redaction import redact_text
    from contracts.run import AgentRunResult
    from planning.conversation_memory import memory_from_history, render
    from planning.step_context import trim

RECALL_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_attempts=3)
REMEMBER_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=5), maximum_attempts=10
)


class TurnMemory:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        request = ctx.inp.request
        # TrustGraph's requests carry either; a conversation id wins over a session id.
        self.conversation_id = request.conversation_id or request.session_id
        self.memory = ConversationMemory(conversation_id=self.conversation_id)
        self.asked = ctx.question

    @property
    def text(self) -> str:
        return render(self.memory, min(MEMORY_PROMPT_CHARS, self.ctx.settings.max_context_size))

    async def recall(self) -> ConversationMemory:
        request = self.ctx.inp.request
        if request.history:
            self.memory = memory_from_history(request.history)
        elif self.conversation_id:
            try:
                self.memory = await workflow.execute_local_activity(
                    Activities.RECALL_CONVERSATION,
                    RecallInput(conversation_id=self.conversation_id),
                    result_type=ConversationMemory,
                    start_to_close_timeout=timedelta(seconds=10),
                    retry_policy=RECALL_RETRY,
                )
            except LOCAL_ACTIVITY_FAILED as exc:
                self.ctx.say(
                    "observation",
                    f"The conversation's memory could not be read ({failure_message(exc)}); "
                    "answering the question on its own.",
                )
        return self.memory

    async def read_follow_up(self) -> FollowUpOutput | None:
        """The question read in the conversation's context (None: there is no conversation before it)."""
        if self.memory.empty:
            return None
        reading = await self.ctx.options.planning.run(
            Activities.READ_FOLLOW_UP,
            FollowUpInput(question=self.ctx.question, conversation=self.text),
            FollowUpOutput,
            summary="read the question in its conversation",
        )
        if reading.changed:
            self.ctx.question = reading.question
            self.ctx.say("thought", f"Read in the conversation's context: {reading.question}")
        return reading

    async def remember(self, result: AgentRunResult) -> None:
        if not self.conversation_id:
            return
        ctx = self.ctx
        # An action turn is remembered by its outcomes (action_record), not by its batch summary's JSON.
        results = "" if ctx.action_record else "\n".join(r.output for r in result.step_results if r.success)
        turn = ConversationTurn(
            request_id=ctx.inp.request_id,
            workflow_id=ctx.workflow_id,
            question=redact_text(self.asked),
            standalone_question=redact_text(ctx.question) if ctx.question != self.asked else "",
            answer=redact_text(result.answer or result.error or ""),
            confidence=result.confidence,
            results=redact_text(trim(results, RESULTS_CHARS)),
            action=ctx.action_record,
            at=ctx.iso_now(),
        )
        try:
            await workflow.execute_local_activity(
                Activities.REMEMBER_TURN,
                RememberInput(conversation_id=self.conversation_id, turn=turn, queue=ctx.inp.queues.workflow),
                start_to_close_timeout=timedelta(seconds=10),
                retry_policy=REMEMBER_RETRY,
            )
        except LOCAL_ACTIVITY_FAILED as exc:
            ctx.notes.append(
                f"this turn could not be added to conversation {self.conversation_id}: {failure_message(exc)}"
            )
            workflow.logger.warning("turn not remembered: %s", failure_message(exc))
