"""The action path of ConfidenceAgentWorkflow (seed 002): intent -> targets -> dry run -> approval ->
concurrent batch -> summary. Mutations are critical: a target set the workflow is not sure of (below
`action_confidence_threshold`), an irreversible action, or more than `action_approval_above` targets
waits for a human's approval through the override mechanism, and nothing changes without it.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from confidence_core.batch import (
        ActionIntent,
        ActionPlanningOutput,
        ActionTarget,
        BatchRequest,
        BatchSummary,
        DryRunInput,
        DryRunOutput,
        ResolveTargetsInput,
        RouteInput,
        TargetsOutput,
        complete_event,
        event_message,
        plan_event,
        summary_text,
        windows,
    )
    from confidence_core.models import AgentRunInput, AgentRunResult, AgentSettings, StepResult
    from confidence_core.models import ConfidenceMetrics as Metrics
    from confidence_core.override import Decision, OverrideRequest
    from confidence_core.status import RunStatus, StepState, StepStatus

from workflows.action_batch import BATCH_WORKFLOW_NAME, run_window

APPROVAL_STEP = "approve"
EXECUTE_STEP = "execute"
APPROVAL_CHOICES = [Decision.ACCEPT.value, Decision.SKIP.value, Decision.ABORT.value]


class RunAborted(Exception):
    """A human ended the run (abort, or no approval in time): the caller gets this message as an error."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ActionPath:
    """Mixed into ConfidenceAgentWorkflow, whose messaging (_say, _emit, _answer, _fail), status (_phase)
    and override waiting (_wait_for_override) it uses."""

    _settings: AgentSettings
    _status: RunStatus
    _notes: list[str]


    async def _run_action(self, inp: AgentRunInput) -> AgentRunResult:
        s = self._settings
        question = inp.request.question
        self._say(inp, "thought", "Intent: ACTION - working out what to change and on which entities.")
        planned: ActionPlanningOutput = await workflow.execute_activity(
            "plan_action", RouteInput(question=question), result_type=ActionPlanningOutput,
            task_queue=inp.queues.planning, start_to_close_timeout=timedelta(milliseconds=s.planning_timeout_ms),
            retry_policy=self._retry_policy())
        if planned.intent is None:
            return await self._fail(inp, planned.error or "Could not tell what to change.")
        intent = planned.intent
        found: TargetsOutput = await workflow.execute_activity(
            "resolve_action_targets", ResolveTargetsInput(intent=intent, max_targets=s.action_max_targets),
            result_type=TargetsOutput, task_queue=inp.queues.tools,
            start_to_close_timeout=timedelta(seconds=120), retry_policy=self._retry_policy())
        if found.error:
            return await self._fail(inp, f"Could not find the entities to change: {found.error}")
        targets = found.targets
        self._status.steps = [
            StepStatus(step_id=APPROVAL_STEP, function=f"{intent.entity_type}.{intent.action_name}",
                       threshold=s.action_confidence_threshold, score=found.confidence, reasoning=found.reasoning),
            StepStatus(step_id=EXECUTE_STEP, function="execute_action", threshold=s.action_confidence_threshold),
        ]
        self._emit(inp, event_message(plan_event(intent, targets)))
        if not targets:
            answer = f"Nothing to change: {found.reasoning}. Nothing was changed."
            await self._answer(inp, answer, None)
            return AgentRunResult(answer=answer, confidence=found.confidence)
        self._say(inp, "observation", f"Targets: {found.reasoning}; confidence {found.confidence:.2f}.")

        dry: DryRunOutput = await workflow.execute_activity(
            "validate_action_batch", DryRunInput(entity_type=intent.entity_type, action_name=intent.action_name,
                                                 entity_ids=[t.entity_id for t in targets]),
            result_type=DryRunOutput, task_queue=inp.queues.tools,
            start_to_close_timeout=timedelta(seconds=300), retry_policy=self._retry_policy())
        if dry.error:
            return await self._fail(inp, f"The dry run failed: {dry.error}")
        preview = "; ".join(f"{f.entity_id}: {f.error}" for f in dry.failures[:20])
        self._say(inp, "observation", f"Dry run: {dry.would_succeed} of {len(targets)} would succeed"
                                      + (f", {dry.would_fail} would fail ({preview})" if dry.would_fail else "") + ".")

        reasons = self._approval_reasons(intent, targets, found, planned.irreversible)
        if reasons:
            decision = await self._approve(inp, intent, targets, found, dry, reasons)
            if decision is not Decision.ACCEPT:
                self._status.step(EXECUTE_STEP).state = StepState.SKIPPED
                self._phase("completed")
                answer = f"{intent.action_name} was not executed ({decision_text(decision)}). Nothing was changed."
                await self._answer(inp, answer, None)
                return AgentRunResult(answer=answer, confidence=found.confidence)

        self._phase("executing", EXECUTE_STEP)
        self._status.step(EXECUTE_STEP).state = StepState.RUNNING
        summary = await self._execute_batch(inp, intent, targets)
        self._status.step(EXECUTE_STEP).state = StepState.SUCCEEDED
        self._emit(inp, event_message(complete_event(summary)))
        self._notes.append(f"{intent.action_name} on {summary.total} {intent.entity_type}: {summary.succeeded} "
                           f"succeeded, {summary.failed} failed (action history: run {workflow.info().workflow_id})")
        score = 0.95  # every outcome is what the graph reported back for its entity
        self._status.final_confidence = score
        self._phase("completed")
        answer = (f"{summary_text(intent.entity_type, intent.action_name, summary)}\n\nConfidence: {score:.2f} - "
                  "each outcome was read back from the graph in the same atomic operation that applied it")
        await self._answer(inp, answer, None)
        result = StepResult(step_id=EXECUTE_STEP, success=True, output=summary.model_dump_json(),
                            confidence=Metrics(score=score, reasoning="outcomes read back from the graph"))
        return AgentRunResult(answer=answer, confidence=score, step_results=[result])

    def _approval_reasons(self, intent: ActionIntent, targets: list[ActionTarget], found: TargetsOutput,
                          irreversible: bool) -> list[str]:
        s = self._settings
        reasons = []
        if found.confidence < s.action_confidence_threshold:
            reasons.append(f"the targets' confidence {found.confidence:.2f} is below "
                           f"{s.action_confidence_threshold:.2f} ({found.reasoning})")
        if len(targets) > s.action_approval_above:
            reasons.append(f"it touches {len(targets)} entities (more than {s.action_approval_above})")
        if irreversible:
            reasons.append(f"{intent.action_name} is irreversible")
        return reasons

    async def _approve(self, inp: AgentRunInput, intent: ActionIntent, targets: list[ActionTarget],
                       found: TargetsOutput, dry: DryRunOutput, reasons: list[str]) -> Decision:
        s = self._settings
        why = "; ".join(reasons)
        request = OverrideRequest(
            step_id=APPROVAL_STEP, function=f"{intent.entity_type}.{intent.action_name}", score=found.confidence,
            threshold=s.action_confidence_threshold, reasoning=f"approval needed: {why}", retries=0,
            arguments={"entity_type": intent.entity_type, "action_name": intent.action_name,
                       "targets": str(len(targets)), "would_succeed": str(dry.would_succeed),
                       "would_fail": str(dry.would_fail)},
            choices=APPROVAL_CHOICES, timeout_s=s.override_timeout_s)
        what = (f"Approval needed before {intent.action_name} runs on {len(targets)} {intent.entity_type} "
                f"entities ({dry.would_succeed} would succeed, {dry.would_fail} would fail): {why}. Choices: "
                "accept (execute), skip (change nothing), abort.")
        override = await self._wait_for_override(inp, request, what)
        status = self._status.step(APPROVAL_STEP)
        if override is None:
            status.state = StepState.SKIPPED
            self._notes.append(f"no approval within {s.override_timeout_s:.0f} s; nothing was changed")
            raise RunAborted(f"No approval arrived within {s.override_timeout_s:.0f} s; "
                                    f"{intent.action_name} was not executed and nothing was changed.")
        decision = Decision(override.decision)
        who = override.by or "a human"
        self._notes.append(f"{decision.value} by {who}" + (f": {override.reason}" if override.reason else ""))
        if decision is Decision.ABORT:
            status.state = StepState.FAILED
            reason = f": {override.reason}" if override.reason else ""
            raise RunAborted(f"Aborted by {who} before {intent.action_name} ran{reason}. Nothing was changed.")
        status.state = StepState.ACCEPTED_BY_OVERRIDE if decision is Decision.ACCEPT else StepState.SKIPPED
        self._say(inp, "observation", f"{'Approved' if decision is Decision.ACCEPT else 'Skipped'} by {who}.")
        return decision

    async def _execute_batch(self, inp: AgentRunInput, intent: ActionIntent,
                             targets: list[ActionTarget]) -> BatchSummary:
        s = self._settings
        parent = workflow.info().workflow_id

        def window_request(chunk: list[ActionTarget], done: int, index: int) -> BatchRequest:
            return BatchRequest(
                run_id=parent, step_id=EXECUTE_STEP, question=inp.request.question,
                entity_type=intent.entity_type, action_name=intent.action_name, targets=chunk,
                max_concurrent=s.action_max_concurrent, timeout_s=s.action_timeout_s,
                max_attempts=s.action_max_attempts, local_activities=s.action_local_activities,
                tools_queue=inp.queues.tools, completed_before=done, total=len(targets),
                response_topic=inp.response_topic, request_id=inp.request_id, bridge_queue=inp.queues.bridge,
                message_prefix=f"{parent}#w{index}")

        self._say(inp, "thought", f"Executing {intent.action_name} on {len(targets)} {intent.entity_type} entities, "
                                  f"at most {s.action_max_concurrent} at a time.")
        if len(targets) <= s.action_window:
            return await run_window(window_request(targets, 0, 0), lambda r: self._emit(inp, r))
        summary = BatchSummary()
        chunks = windows(targets, s.action_window)
        queue = inp.queues.workflow
        for index, chunk in enumerate(chunks, start=1):
            part: BatchSummary = await workflow.execute_child_workflow(
                BATCH_WORKFLOW_NAME, window_request(chunk, summary.total, index), id=f"{parent}-batch-{index}",
                result_type=BatchSummary, task_queue=queue)
            summary.merge(part)
        return summary


def decision_text(decision: Decision) -> str:
    return {Decision.SKIP: "skipped at approval", Decision.ABORT: "aborted"}.get(decision, decision.value)
