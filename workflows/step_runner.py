"""One plan step under confidence control: run it, score it, and below its threshold climb the retry
ladder (the same arguments after a backoff, adjusted arguments, a simplified approach), then ask a human
(accept, retry, skip or abort) and, without an answer, give the step up. A tool call that may change things
(an MCP tool not marked read-only) is made only once a human approved it, with its arguments shown."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows.errors import failure_message
from workflows.run_context import RunAborted, RunContext

with workflow.unsafe.imports_passed_through():
    from confidence.ladder import RUNG_NOTES, Rung, backoff, rung_for
    from contracts.names import Activities
    from contracts.override import Decision, Override, OverrideRequest, Role
    from contracts.plan import ConfidenceMetrics, ExecutionStep, StepResult
    from contracts.query_path import AdjustInput, AdjustOutput, StepInput, StepOutput
    from contracts.records import AttemptAudit, StepAudit
    from contracts.run import RequestScope, StepState, StepStatus
    from overrides.action_gate import closed_without_identities
    from planning.adjusters import ADJUSTERS
    from planning.step_context import select_context, trim

OBSERVATION_PREVIEW = 1200
CALL_CHOICES = [Decision.ACCEPT.value, Decision.SKIP.value, Decision.ABORT.value]


class StepRunner:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    async def run(self, step: ExecutionStep, outputs: dict[str, str]) -> StepResult:
        ctx, settings = self.ctx, self.ctx.settings
        status = ctx.status.step(step.id)
        status.state = StepState.RUNNING
        ctx.phase("executing", step.id)
        audit = StepAudit(
            step_id=step.id,
            function=step.function,
            start_time=ctx.iso_now(),
            end_time="",
            confidence_score=None,
            retry_count=0,
            success=False,
            outcome="running",
        )
        ctx.audit[step.id] = audit
        context = select_context(outputs, step.dependencies, settings.max_context_size)
        arguments = dict(step.arguments)
        tried = [arguments]
        rung = Rung.SAME
        retry = 0
        human_retries = 0
        ladder_done = False
        while True:
            args_text = "; ".join(f"{k}={v}" for k, v in arguments.items())
            attempt_label = f" (retry {retry})" if retry else ""
            ctx.say("thought", f"Step {step.id}{attempt_label}: {step.function}({args_text})")
            rung_text = "" if not retry else "human" if ladder_done else rung.value
            out = await self._attempt(step, arguments, context, retry, rung=rung_text)
            if out.needs_approval:  # only tools that say so (an MCP tool not marked read-only)
                approved = await self._approved_call(step, status, audit, arguments, context, retry, rung_text, out)
                if isinstance(approved, StepResult):
                    return approved
                out = approved
            score = out.confidence.score
            status.score, status.reasoning, status.retries = score, out.confidence.reasoning, retry
            # The output only when the audit keeps it: the record is the input of an activity, so it stays in the
            # run's history (up to 16 KB per attempt otherwise, for nothing: the audit sink drops it).
            audit.attempts.append(
                AttemptAudit(
                    rung=rung.value if retry else "initial",
                    arguments=arguments,
                    confidence_score=score,
                    reasoning=out.confidence.reasoning,
                    output=out.output if settings.include_raw_outputs else "",
                )
            )
            ctx.trace.attempt(step.id, rung_text or "initial", arguments, out.confidence, out.output, out.error or "")
            met = out.success and score >= step.confidence_threshold
            verdict = "meets" if met else "is below"
            ctx.say(
                "observation",
                f"{trim(out.output, OBSERVATION_PREVIEW)}\nConfidence {score:.2f} {verdict} the "
                f"threshold {step.confidence_threshold:.2f}: {out.confidence.reasoning}",
            )
            if met:
                return self._finish(step, status, audit, out, retry, StepState.SUCCEEDED, success=True)
            if not ladder_done and retry < settings.max_retries:
                retry += 1
                rung = rung_for(retry)
                if rung is Rung.SAME and out.deterministic:
                    rung = Rung.REPAIR  # the same arguments would fail the same way
                status.state = StepState.RETRYING
                ctx.say(
                    "thought",
                    f"Step {step.id}: confidence {score:.2f} is below {step.confidence_threshold:.2f} "
                    f"({out.confidence.reasoning}); retry {retry} of {settings.max_retries}: "
                    f"{RUNG_NOTES[rung]}.",
                )
                if rung is Rung.SAME:
                    await workflow.sleep(backoff(retry, settings.retry_backoff_factor, settings.max_retry_delay_s))
                    continue
                proposed = await self._adjust(step, arguments, out, rung)
                if proposed not in tried:
                    arguments = proposed
                    tried.append(proposed)
                    continue
                # Running arguments that were already tried would only repeat their result.
                ctx.say(
                    "thought",
                    f"Step {step.id}: the {rung.value} rung found nothing new to try; the retry ladder stops here.",
                )
            if not settings.override_enabled:
                return self._finish(step, status, audit, out, retry, StepState.LOW_CONFIDENCE, success=False)
            override = await self._ask_override(step, out, retry, arguments, human_retries)
            if override is None:
                ctx.notes.append(f"no override for step {step.id} within {settings.override_timeout_s:.0f} s")
                ctx.say(
                    "observation",
                    f"No override arrived for step {step.id} within "
                    f"{settings.override_timeout_s:.0f} s; continuing without its result.",
                )
                return self._finish(step, status, audit, out, retry, StepState.LOW_CONFIDENCE, success=False)
            decided = self._decided(step, status, audit, out, retry, override)
            if decided is not None:
                return decided
            # RETRY: once more with the human's arguments (or the same), then back to the human if still weak.
            arguments = dict(override.arguments) if override.arguments else arguments
            retry += 1
            human_retries += 1
            rung = Rung.SAME
            ladder_done = True
            status.state = StepState.RETRYING
            ctx.say("thought", f"Step {step.id}: retrying as {override.by or 'a human'} asked.")

    def _decided(
        self, step: ExecutionStep, status: StepStatus, audit: StepAudit, out: StepOutput, retry: int, override: Override
    ) -> StepResult | None:
        """The step's result as a human decided it, or None for a retry."""
        audit.override = {"decision": override.decision, "by": override.by, "reason": override.reason}
        who = override.by or "a human"
        decision = Decision(override.decision)
        if decision is Decision.ABORT:
            self._finish(step, status, audit, out, retry, StepState.FAILED, success=False)
            reason = f": {override.reason}" if override.reason else ""
            raise RunAborted(f"Aborted by {who} at step {step.id}{reason}")
        if decision is Decision.SKIP:
            self.ctx.say("observation", f"Step {step.id} skipped by {who}.")
            return self._finish(step, status, audit, out, retry, StepState.SKIPPED, success=False)
        if decision is Decision.ACCEPT:
            self.ctx.say("observation", f"Step {step.id} accepted by {who} at confidence {out.confidence.score:.2f}.")
            accepted = out.model_copy(
                update={
                    "confidence": out.confidence.model_copy(
                        update={"reasoning": f"{out.confidence.reasoning} (accepted by {who})"}
                    )
                }
            )
            return self._finish(step, status, audit, accepted, retry, StepState.ACCEPTED_BY_OVERRIDE, success=True)
        return None

    async def _approved_call(
        self,
        step: ExecutionStep,
        status: StepStatus,
        audit: StepAudit,
        arguments: dict[str, str],
        context: dict[str, str],
        retry: int,
        rung: str,
        out: StepOutput,
    ) -> StepOutput | StepResult:
        """The tool's output once a human approved calling it with these arguments; else the step's end
        (refused without identities or the development flag, skipped, no answer in time, or aborted)."""
        ctx, settings = self.ctx, self.ctx.settings
        tool = arguments.get("tool", "")
        what = f"step {step.id} ({step.function} {tool})" if tool else f"step {step.id} ({step.function})"
        if not settings.override_keys and not settings.open_actions:
            refused = closed_without_identities(f"Calling {what}, which may change things,")
            ctx.say("observation", refused)
            ctx.notes.append(refused)
            return self._finish(
                step, status, audit, out.model_copy(update={"output": refused}), retry, StepState.FAILED, success=False
            )
        request = OverrideRequest(
            step_id=step.id,
            function=step.function,
            score=out.confidence.score,
            threshold=step.confidence_threshold,
            reasoning=f"approval needed: {out.needs_approval}",
            retries=retry,
            arguments=arguments,
            choices=CALL_CHOICES,
            timeout_s=settings.override_timeout_s,
            role=Role.APPROVE,
        )
        shown = "; ".join(f"{k}={v}" for k, v in arguments.items())
        override = await ctx.wait_for_override(
            request,
            f"Approval needed before {what} is called with {shown}: {out.needs_approval}. Choices: accept "
            "(call it), skip (do not call it), abort.",
        )
        if override is None:
            ctx.notes.append(
                f"no approval for step {step.id} within {settings.override_timeout_s:.0f} s; the tool was not called"
            )
            ctx.say("observation", f"No approval arrived for step {step.id}; {step.function} was not called.")
            return self._finish(step, status, audit, out, retry, StepState.SKIPPED, success=False)
        if Decision(override.decision) is not Decision.ACCEPT:
            decided = self._decided(step, status, audit, out, retry, override)
            assert decided is not None  # skip (abort raised): a retry is not a choice here
            return decided
        audit.override = {"decision": override.decision, "by": override.by, "reason": override.reason}
        ctx.say("observation", f"Calling {what} approved by {override.by or 'a human'}.")
        status.state = StepState.RUNNING
        return await self._attempt(step, arguments, context, retry, rung, approved=True)

    async def _attempt(
        self,
        step: ExecutionStep,
        arguments: dict[str, str],
        context: dict[str, str],
        retry: int,
        rung: str,
        approved: bool = False,
    ) -> StepOutput:
        ctx = self.ctx
        try:
            out = await ctx.options.tools.run(
                step.function,
                StepInput(
                    question=ctx.question,
                    step=step.model_copy(update={"arguments": arguments}),
                    context=context,
                    retry_count=retry,
                    workflow_id=ctx.workflow_id,
                    rung=rung,
                    approved=approved,
                    collection=RequestScope.of(ctx.inp.request).collection,
                    explain_parent=ctx.trace.step_uri(step.id),
                ),
                StepOutput,
                start_to_close=timedelta(milliseconds=step.timeout_ms),
                summary=f"step {step.id}: {step.function}" + (f" (retry {retry})" if retry else ""),
            )
            ctx.trace.forward(out.explain)  # the trace of a service it called, before the step's own
        except ActivityError as exc:
            message = failure_message(exc)
            out = StepOutput(
                success=False,
                output=f"{step.function} failed: {message}",
                error=message,
                confidence=ConfidenceMetrics(score=0.0, reasoning=f"the tool failed: {message}", retry_count=retry),
            )
        return out

    async def _adjust(
        self, step: ExecutionStep, arguments: dict[str, str], last: StepOutput, rung: Rung
    ) -> dict[str, str]:
        """The tool's own deterministic repair if it has one for this rung, else the LLM's proposal."""
        adjuster = ADJUSTERS.get(step.function)
        repaired = adjuster(arguments, rung) if adjuster is not None else None
        if repaired is not None:
            return repaired
        try:
            adjusted = await self.ctx.options.planning.run(
                Activities.ADJUST_STEP,
                AdjustInput(
                    question=self.ctx.question,
                    step=step.model_copy(update={"arguments": arguments}),
                    rung=rung.value,
                    last_output=trim(last.output, 2000),
                    reasoning=last.confidence.reasoning,
                ),
                AdjustOutput,
                summary=f"repair step {step.id} ({rung.value})",
            )
        except ActivityError as exc:
            workflow.logger.warning("adjust_step failed, retrying with the same arguments: %s", exc)
            return arguments
        return adjusted.arguments

    def _finish(
        self,
        step: ExecutionStep,
        status: StepStatus,
        audit: StepAudit,
        out: StepOutput,
        retry: int,
        state: StepState,
        *,
        success: bool,
    ) -> StepResult:
        status.state = state
        audit.end_time = self.ctx.iso_now()
        audit.confidence_score = out.confidence.score
        audit.retry_count = retry
        audit.success = success
        audit.outcome = state.value
        if retry:
            self.ctx.metrics.retried_steps += 1
            if state is StepState.SUCCEEDED:
                self.ctx.metrics.retried_steps_recovered += 1
        confidence = out.confidence.model_copy(update={"retry_count": retry})
        self.ctx.finished.append(confidence)
        self.ctx.trace.step(step, audit, confidence, out.output, success)
        return StepResult(
            step_id=step.id,
            success=success,
            output=out.output,
            confidence=confidence,
            execution_time_ms=out.execution_time_ms,
        )

    async def _ask_override(
        self, step: ExecutionStep, out: StepOutput, retries: int, arguments: dict[str, str], human_retries: int
    ) -> Override | None:
        request = OverrideRequest(
            step_id=step.id,
            function=step.function,
            score=out.confidence.score,
            threshold=step.confidence_threshold,
            reasoning=out.confidence.reasoning,
            retries=retries,
            arguments=arguments,
            timeout_s=self.ctx.settings.override_timeout_s,
        )
        choices = "accept, retry (optionally with new arguments), skip, abort"
        limit = self.ctx.settings.max_human_retries
        if human_retries >= limit:
            # Every retry is one more tool call and output in the run's history: a human gets a few, not any.
            request.choices = [c for c in request.choices if c != Decision.RETRY.value]
            request.max_human_retries = limit
            choices = f"accept, skip, abort (retried {human_retries} time(s) at a human's request, the most allowed)"
        what = (
            f"Override needed for step {step.id} ({step.function}): confidence {request.score:.2f} is below "
            f"the threshold {request.threshold:.2f} after {retries} retries ({request.reasoning}). Choices: "
            f"{choices}."
        )
        return await self.ctx.wait_for_override(request, what)
