"""The action path: intent -> who may start it -> targets -> dry run -> approval -> concurrent batch ->
summary. Mutations are critical: a requester without the right to act (overrides/action_gate.py) is
refused before any look-up; a target set the workflow is not sure of (below `action_confidence_threshold`),
an irreversible action, more than `action_approval_above` targets, or any action at all with
`approve_every_action` waits for a human's approval through the override mechanism, and nothing changes
without it.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows.action_batch import group_size_for, run_window
from workflows.run_context import RunAborted, RunContext

with workflow.unsafe.imports_passed_through():
    from actions.catalogue import CATALOGUE_CONFIDENCE
    from contracts.action_path import (
        ActionIntent,
        ActionPlanningOutput,
        ActionTarget,
        BatchRequest,
        BatchSummary,
        DryRunInput,
        DryRunOutput,
        ResolveTargetsInput,
        TargetsOutput,
        complete_event,
        event_message,
        filters_text,
        parameters_text,
        plan_event,
        related_text,
        summary_text,
        windows,
    )
    from contracts.conversation import ActionRecordSummary
    from contracts.names import BATCH_WORKFLOW_NAME, Activities
    from contracts.override import Decision, OverrideRequest, Role
    from contracts.plan import ConfidenceMetrics, StepResult
    from contracts.routing import RouteInput
    from contracts.run import AgentRunResult, StepState, StepStatus
    from overrides.action_gate import action_refusal
    from planning.conversation_memory import action_summary

APPROVAL_STEP = "approve"
EXECUTE_STEP = "execute"
APPROVAL_CHOICES = [Decision.ACCEPT.value, Decision.SKIP.value, Decision.ABORT.value]


class ActionPath:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    async def run(self) -> AgentRunResult:
        s = self.ctx.settings
        question = self.ctx.question
        self.ctx.say("thought", "Intent: ACTION - working out what to change and on which entities.")
        planned = await self.ctx.options.planning.run(
            Activities.PLAN_ACTION, RouteInput(question=question), ActionPlanningOutput, summary="plan the action"
        )
        if planned.intent is None and planned.answer:  # a question about what can be done
            score = CATALOGUE_CONFIDENCE
            answer = (
                f"{planned.answer}\n\nConfidence: {score:.2f} - read from the action definitions; nothing was changed"
            )
            self.ctx.status.final_confidence = score
            self.ctx.phase("completed")
            await self.ctx.answer(answer, None)
            return AgentRunResult(answer=answer, confidence=score)
        if planned.intent is None:
            return await self.ctx.fail(planned.error or "Could not tell what to change.")
        intent = planned.intent
        refused = action_refusal(s, self.ctx.inp.request.user, intent.action_name)  # before any look-up
        if refused:
            self.ctx.notes.append(refused)
            raise RunAborted(refused)
        for note in planned.notes:
            self.ctx.say("observation", note)
        found = await self.ctx.options.tools.run(
            Activities.RESOLVE_ACTION_TARGETS,
            ResolveTargetsInput(intent=intent, max_targets=s.action_max_targets, left_out=planned.left_out),
            TargetsOutput,
            start_to_close=timedelta(seconds=120),
            summary=f"find the {intent.entity_type} entities to {intent.action_name}",
        )
        if found.error:
            return await self.ctx.fail(f"Could not find the entities to change: {found.error}")
        targets = found.targets
        self.ctx.status.steps = [
            StepStatus(
                step_id=APPROVAL_STEP,
                function=f"{intent.entity_type}.{intent.action_name}",
                threshold=s.action_confidence_threshold,
                score=found.confidence,
                reasoning=found.reasoning,
            ),
            StepStatus(step_id=EXECUTE_STEP, function="execute_action", threshold=s.action_confidence_threshold),
        ]
        self.ctx.emit(event_message(plan_event(intent, targets, planned.left_out)))
        if not targets:
            answer = f"Nothing to change: {found.reasoning}. Nothing was changed."
            await self.ctx.answer(answer, None)
            return AgentRunResult(answer=answer, confidence=found.confidence)
        self.ctx.say("observation", f"Targets: {found.reasoning}; confidence {found.confidence:.2f}.")

        dry = await self.ctx.options.tools.run(
            Activities.VALIDATE_ACTION_BATCH,
            DryRunInput(
                entity_type=intent.entity_type,
                action_name=intent.action_name,
                entity_ids=[t.entity_id for t in targets],
            ),
            DryRunOutput,
            start_to_close=timedelta(seconds=300),
            summary=f"dry run: {intent.action_name} on {len(targets)} {intent.entity_type} entities",
        )
        if dry.error:
            return await self.ctx.fail(f"The dry run failed: {dry.error}")
        preview = "; ".join(f"{f.entity_id}: {f.error}" for f in dry.failures[:20])
        self.ctx.say(
            "observation",
            f"Dry run: {dry.would_succeed} of {len(targets)} would succeed"
            + (f", {dry.would_fail} would fail ({preview})" if dry.would_fail else "")
            + ".",
        )

        # Until the batch ran, the conversation remembers this turn as one that changed nothing.
        self.ctx.action_record = ActionRecordSummary(
            entity_type=intent.entity_type,
            action_name=intent.action_name,
            total=len(targets),
            executed=False,
            parameters=intent.parameters,
        )
        reasons = self._approval_reasons(intent, targets, found, planned.irreversible)
        if reasons:
            decision = await self._approve(intent, targets, found, dry, reasons, planned.left_out)
            if decision is not Decision.ACCEPT:
                self.ctx.status.step(EXECUTE_STEP).state = StepState.SKIPPED
                self.ctx.phase("completed")
                answer = f"{intent.action_name} was not executed ({decision_text(decision)}). Nothing was changed."
                await self.ctx.answer(answer, None)
                return AgentRunResult(answer=answer, confidence=found.confidence)

        self.ctx.phase("executing", EXECUTE_STEP)
        self.ctx.status.step(EXECUTE_STEP).state = StepState.RUNNING
        summary = await self._execute_batch(intent, targets)
        self.ctx.action_record = action_summary(intent.entity_type, intent.action_name, summary, intent.parameters)
        self.ctx.status.step(EXECUTE_STEP).state = StepState.SUCCEEDED
        self.ctx.emit(event_message(complete_event(summary)))
        self.ctx.notes.append(
            f"{intent.action_name} on {summary.total} {intent.entity_type}: {summary.succeeded} "
            f"succeeded, {summary.failed} failed (action history: run {self.ctx.workflow_id})"
        )
        score = 0.95  # every outcome is what the graph reported back for its entity
        self.ctx.status.final_confidence = score
        self.ctx.phase("completed")
        answer = (
            f"{summary_text(intent.entity_type, intent.action_name, summary)}\n\nConfidence: {score:.2f} - "
            "each outcome was read back from the graph in the same atomic operation that applied it"
        )
        await self.ctx.answer(answer, None)
        result = StepResult(
            step_id=EXECUTE_STEP,
            success=True,
            output=summary.model_dump_json(),
            confidence=ConfidenceMetrics(score=score, reasoning="outcomes read back from the graph"),
        )
        return AgentRunResult(answer=answer, confidence=score, step_results=[result])

    def _approval_reasons(
        self, intent: ActionIntent, targets: list[ActionTarget], found: TargetsOutput, irreversible: bool
    ) -> list[str]:
        s = self.ctx.settings
        reasons = []
        if found.confidence < s.action_confidence_threshold:
            reasons.append(
                f"the targets' confidence {found.confidence:.2f} is below "
                f"{s.action_confidence_threshold:.2f} ({found.reasoning})"
            )
        if len(targets) > s.action_approval_above:
            reasons.append(f"it touches {len(targets)} entities (more than {s.action_approval_above})")
        if irreversible:
            reasons.append(f"{intent.action_name} is irreversible")
        if s.approve_every_action:
            reasons.append("the operator requires approval for every action")
        return reasons

    async def _approve(
        self,
        intent: ActionIntent,
        targets: list[ActionTarget],
        found: TargetsOutput,
        dry: DryRunOutput,
        reasons: list[str],
        left_out: list[str],
    ) -> Decision:
        s = self.ctx.settings
        why = "; ".join(reasons)
        arguments = {
            "entity_type": intent.entity_type,
            "action_name": intent.action_name,
            "targets": str(len(targets)),
            "would_succeed": str(dry.would_succeed),
            "would_fail": str(dry.would_fail),
        }
        # What the approver approves includes the values the action writes and the conditions that chose
        # the targets, when there are some.
        details = ""
        if intent.parameters:
            arguments["parameters"] = parameters_text(intent.parameters)
            details += f" with {arguments['parameters']}"
        chosen = []
        if intent.related_class and not intent.entity_ids:
            arguments["related"] = related_text(
                intent.related_class, intent.related_name.strip(), intent.related_filters, intent.related_excluded
            )
            chosen.append(f"of {arguments['related']}")
        if intent.filters:
            arguments["filters"] = filters_text(intent.filters)
            chosen.append(f"where {arguments['filters']}")
        if chosen:
            details += f" (targets {' '.join(chosen)})"
        if left_out:  # the first thing an approver reads: these targets may be more than was asked for
            arguments["left_out"] = "; ".join(left_out)
        request = OverrideRequest(
            step_id=APPROVAL_STEP,
            function=f"{intent.entity_type}.{intent.action_name}",
            score=found.confidence,
            threshold=s.action_confidence_threshold,
            reasoning=f"approval needed: {why}",
            retries=0,
            arguments=arguments,
            choices=APPROVAL_CHOICES,
            timeout_s=s.override_timeout_s,
            role=Role.APPROVE,
        )
        what = (
            f"Approval needed before {intent.action_name}{details} runs on {len(targets)} {intent.entity_type} "
            f"entities ({dry.would_succeed} would succeed, {dry.would_fail} would fail): {why}. Choices: "
            "accept (execute), skip (change nothing), abort."
        )
        if left_out:
            what = (
                f"Left out of the selection: {arguments['left_out']}. The targets may be more than the request "
                f"asks for.\n{what}"
            )
        override = await self.ctx.wait_for_override(request, what)
        status = self.ctx.status.step(APPROVAL_STEP)
        if override is None:
            status.state = StepState.SKIPPED
            self.ctx.notes.append(f"no approval within {s.override_timeout_s:.0f} s; nothing was changed")
            raise RunAborted(
                f"No approval arrived within {s.override_timeout_s:.0f} s; "
                f"{intent.action_name} was not executed and nothing was changed."
            )
        decision = Decision(override.decision)
        who = override.by or "a human"
        self.ctx.notes.append(f"{decision.value} by {who}" + (f": {override.reason}" if override.reason else ""))
        if decision is Decision.ABORT:
            status.state = StepState.FAILED
            reason = f": {override.reason}" if override.reason else ""
            raise RunAborted(f"Aborted by {who} before {intent.action_name} ran{reason}. Nothing was changed.")
        status.state = StepState.ACCEPTED_BY_OVERRIDE if decision is Decision.ACCEPT else StepState.SKIPPED
        self.ctx.say("observation", f"{'Approved' if decision is Decision.ACCEPT else 'Skipped'} by {who}.")
        return decision

    async def _execute_batch(self, intent: ActionIntent, targets: list[ActionTarget]) -> BatchSummary:
        s = self.ctx.settings
        parent = self.ctx.workflow_id
        inp = self.ctx.inp
        group_size = group_size_for(s.action_max_concurrent, s.action_group_size)

        def window_request(chunk: list[ActionTarget], done: int, index: int) -> BatchRequest:
            return BatchRequest(
                workflow_id=parent,
                step_id=EXECUTE_STEP,
                question=self.ctx.question,
                entity_type=intent.entity_type,
                action_name=intent.action_name,
                targets=chunk,
                parameters=intent.parameters,
                max_concurrent=s.action_max_concurrent,
                timeout_s=s.action_timeout_s,
                max_attempts=s.action_max_attempts,
                group_size=group_size,
                completed_before=done,
                total=len(targets),
                response_topic=inp.response_topic,
                request_id=inp.request_id,
                message_prefix=f"{parent}#w{index}",
            )

        self.ctx.say(
            "thought",
            f"Executing {intent.action_name} on {len(targets)} {intent.entity_type} entities, "
            f"at most {s.action_max_concurrent} at a time.",
        )
        if len(targets) <= s.action_window:
            return await run_window(window_request(targets, 0, 0), self.ctx.emit)
        summary = BatchSummary()
        chunks = windows(targets, s.action_window)
        queue = inp.queues.workflow
        for index, chunk in enumerate(chunks, start=1):
            part: BatchSummary = await workflow.execute_child_workflow(
                BATCH_WORKFLOW_NAME,
                window_request(chunk, summary.total, index),
                id=f"{parent}-batch-{index}",
                result_type=BatchSummary,
                task_queue=queue,
                static_summary=f"{intent.action_name} on {intent.entity_type}: window {index} of {len(chunks)} "
                f"({len(chunk)} entities)",
            )
            summary.merge(part)
        return summary


def decision_text(decision: Decision) -> str:
    return {Decision.SKIP: "skipped at approval", Decision.ABORT: "aborted"}.get(decision, decision.value)
