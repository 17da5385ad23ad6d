"""ConfidenceAgentWorkflow: one per request. Route, then answer by the query path (plan -> steps under
confidence control -> synthesis) or the action path (targets -> dry run -> approval -> batch), streaming
every message to the caller, and leave a record (metrics and audit) at the end.

Deterministic orchestration only: every side effect is an activity (docs/architecture.md). Humans answer
through the signal `override` or the update `submit_override`; `status` is the query for the run's state.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows.action_flow import ActionPath
from workflows.errors import LOCAL_ACTIVITY_FAILED, failure_message
from workflows.query_flow import QueryPath
from workflows.record_builder import run_record
from workflows.run_context import RunAborted, RunContext
from workflows.step_runner import StepRunner
from workflows.turn_memory import TurnMemory

with workflow.unsafe.imports_passed_through():
    from contracts.names import WORKFLOW_NAME, Activities, Handlers
    from contracts.override import Override, OverrideRejected
    from contracts.redaction import redact_text
    from contracts.routing import Intent, RouteInput, RouteOutput
    from contracts.run import AgentRunInput, AgentRunResult, AgentSettings, RunStatus
    from contracts.wire_codec import error_response
    from planning.request_config import apply_request_overrides


@workflow.defn(name=WORKFLOW_NAME)
class ConfidenceAgentWorkflow:
    @workflow.init
    def __init__(self, inp: AgentRunInput) -> None:
        self.ctx = RunContext(inp)

    @workflow.run
    async def run(self, inp: AgentRunInput) -> AgentRunResult:
        ctx = self.ctx
        started = workflow.now()
        ctx.begin()
        settings, notes = apply_request_overrides(await self._worker_settings(inp), inp.request.plan)
        ctx.configure(settings)
        ctx.notes.extend(notes)
        turn = TurnMemory(ctx)
        if turn.conversation_id:
            ctx.hold_answer = True
        try:
            result = await self._answer(notes, turn)
        except RunAborted as exc:
            ctx.phase("aborted")
            message = redact_text(exc.message)  # it quotes the human's reason
            ctx.trace.failure(message, "aborted")
            ctx.emit(error_response(message))
            result = AgentRunResult(answer="", error=message, plan=ctx.status.plan)
        except ActivityError as exc:
            message = f"The agent could not finish: {failure_message(exc)}"
            workflow.logger.warning("run failed: %s", message)
            result = await ctx.fail(message)
        await turn.remember(result)
        ctx.release_answer()
        undelivered: BaseException | None = None
        try:
            await ctx.outbox.flush()
        except LOCAL_ACTIVITY_FAILED as exc:
            # The run still leaves its audit record, saying its messages did not all reach the caller.
            ctx.notes.append(f"not every message reached the response topic: {failure_message(exc)}")
            undelivered = exc
        # The trace is kept (the flow's triples store, the librarian) before the run ends: its writes waited until
        # the caller had every message, so nothing the caller waits for waits for them.
        await ctx.explain_store.flush()
        await self._record(result, started)
        if undelivered is not None:
            raise undelivered
        if not (result.needs_fallback or inp.subagent):
            result.closing = ctx.outbox.closing
        return result

    async def _answer(self, notes: list[str], turn: TurnMemory) -> AgentRunResult:
        ctx = self.ctx
        ctx.phase("planning")
        if notes:
            ctx.say("observation", "Request settings: " + "; ".join(notes))
        query_path = QueryPath(ctx, StepRunner(ctx))
        await turn.recall()
        reading = await turn.read_follow_up()
        if reading is not None and reading.from_conversation:
            return await query_path.answer_from_conversation(turn)
        if ctx.settings.router_enabled:
            route = await ctx.options.planning.run(
                Activities.ROUTE,
                RouteInput(question=ctx.question),
                RouteOutput,
                summary="route: query, action or direct answer",
            )
            if route.intent is Intent.ACTION:
                return await ActionPath(ctx).run()
            if route.intent is Intent.ANSWER:
                return await query_path.answer_directly()
        return await query_path.run()

    async def _worker_settings(self, inp: AgentRunInput) -> AgentSettings:
        """The worker's own configuration, read by a local activity so that it is recorded for replay; settings
        the caller gave keep the worker's approval and audit policy (AgentSettings.under_policy_of)."""
        worker = await workflow.execute_local_activity(
            Activities.AGENT_SETTINGS, result_type=AgentSettings, start_to_close_timeout=timedelta(seconds=10)
        )
        return worker if inp.settings is None else inp.settings.under_policy_of(worker)

    async def _record(self, result: AgentRunResult, started: datetime) -> None:
        """Metrics and the audit record, in one activity at the end of the run."""
        await self.ctx.options.audit.run(
            Activities.RECORD_RUN, run_record(self.ctx, result, started), summary="record metrics and the audit trail"
        )

    # -- a human's override: signal, update; the run's state: query ------------------------------

    @workflow.signal(name=Handlers.OVERRIDE)
    def override_signal(self, override: Override) -> None:
        """For `temporal workflow signal --name override`; an unacceptable signal is recorded and ignored."""
        try:
            self.ctx.check(override)
        except OverrideRejected as exc:
            self.ctx.reject(override, str(exc))
            return
        self.ctx.overrides[override.step_id] = override

    @workflow.update(name=Handlers.SUBMIT_OVERRIDE)
    def submit_override(self, override: Override) -> str:
        decision = self.ctx.check(override)
        self.ctx.overrides[override.step_id] = override
        return f"{decision.value} recorded for step {override.step_id}"

    @submit_override.validator
    def _validate_override(self, override: Override) -> None:
        # Rejections here never reach the history, and the caller gets the reason.
        self.ctx.check(override)

    @workflow.query(name=Handlers.STATUS)
    def status(self) -> RunStatus:
        return self.ctx.status
