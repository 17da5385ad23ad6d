"""ConfidenceAgentWorkflow: plan -> run the DAG with confidence control -> synthesize, streaming every message.

Deterministic orchestration only: every side effect (LLM, graph, Pulsar, audit sink, metrics) is an
activity, and the messages for the caller go through the bridge's `emit` activity one at a time, so
they stay in order. A step below its threshold climbs the retry ladder (same arguments after a
backoff, adjusted arguments, a simplified approach), then waits for a human override (signal
`override` or update `submit_override`) and, without one, fails gracefully.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey
from temporalio.exceptions import ActivityError

from workflows.action_path import ActionPath, RunAborted
from workflows.errors import failure_message
from workflows.outbox import EMIT_RETRY, Outbox

with workflow.unsafe.imports_passed_through():
    from confidence_core.activity_io import (
        AdjustInput,
        AdjustOutput,
        PlanningInput,
        PlanningOutput,
        RunMetrics,
        RunRecord,
        StepInput,
        StepOutput,
        StepTiming,
        SupportingResult,
        SynthesisInput,
        SynthesisOutput,
    )
    from confidence_core.audit import AttemptAudit, AuditRecord, StepAudit
    from confidence_core.batch import Intent, RouteInput, RouteOutput
    from confidence_core.confidence import LOW_CONFIDENCE, overall_confidence
    from confidence_core.cypher_text import broaden_cypher
    from confidence_core.dag import dependents_of, ready_steps
    from confidence_core.ladder import RUNG_NOTES, Rung, backoff, rung_for
    from confidence_core.memory import select_context, trim
    from confidence_core.models import (
        AgentResponse,
        AgentRunInput,
        AgentRunResult,
        AgentSettings,
        ConfidenceMetrics,
        ExecutionPlan,
        ExecutionStep,
        StepResult,
    )
    from confidence_core.override import Decision, Override, OverrideRejected, OverrideRequest, check_override
    from confidence_core.plan_parser import describe_plan
    from confidence_core.request_config import apply_request_overrides
    from confidence_core.status import RunStatus, StepState, StepStatus
    from confidence_core.wire import error_response

WORKFLOW_NAME = "ConfidenceAgentWorkflow"
OBSERVATION_PREVIEW = 1200

SA_STATUS = SearchAttributeKey.for_keyword("TgcaStatus")
SA_CURRENT_STEP = SearchAttributeKey.for_keyword("TgcaCurrentStep")
SA_FINAL_CONFIDENCE = SearchAttributeKey.for_float("TgcaFinalConfidence")
SA_AWAITING_OVERRIDE = SearchAttributeKey.for_bool("TgcaAwaitingOverride")
SEARCH_ATTRIBUTES = {"TgcaStatus": "Keyword", "TgcaCurrentStep": "Keyword", "TgcaFinalConfidence": "Double",
                     "TgcaAwaitingOverride": "Bool"}


def answer_chunks(answer: str, size: int = 120) -> list[str]:
    """Sentence-aligned chunks of about `size` characters that join back to the whole answer."""
    chunks: list[str] = []
    current = ""
    for sentence in re.split(r"(?<=[.!?\n])(?=\s)", answer):
        if current and len(current) + len(sentence) > size:
            chunks.append(current)
            current = ""
        current += sentence
    return [*chunks, current] if current else chunks or [answer]


@workflow.defn(name=WORKFLOW_NAME)
class ConfidenceAgentWorkflow(ActionPath):
    @workflow.init
    def __init__(self, inp: AgentRunInput) -> None:
        self._outbox = Outbox(inp.response_topic, inp.request_id, inp.queues.bridge, workflow.info().workflow_id)
        self._override_lock = asyncio.Lock()
        self._settings: AgentSettings = inp.settings or AgentSettings()
        self._status = RunStatus()
        self._overrides: dict[str, Override] = {}
        self._audit: dict[str, StepAudit] = {}
        self._metrics = RunMetrics()
        self._notes: list[str] = []
        self._with_router = False

    # -- human override: signal, update, query ---------------------------------------------------

    def _known_steps(self) -> set[str]:
        return {s.step_id for s in self._status.steps}

    def _check(self, override: Override) -> Decision:
        return check_override(override, self._status.pending_override, self._known_steps(),
                              self._settings.override_token_sha256)

    @workflow.signal(name="override")
    def override_signal(self, override: Override) -> None:
        """For `temporal workflow signal --name override`; an unacceptable signal is recorded and ignored."""
        try:
            self._check(override)
        except OverrideRejected as exc:
            self._status.rejected_overrides.append(f"{override.step_id}: {exc}")
            workflow.logger.warning("override signal rejected: %s", exc)
            return
        self._overrides[override.step_id] = override

    @workflow.update(name="submit_override")
    def submit_override(self, override: Override) -> str:
        decision = self._check(override)
        self._overrides[override.step_id] = override
        return f"{decision.value} recorded for step {override.step_id}"

    @submit_override.validator
    def _validate_override(self, override: Override) -> None:
        # Rejections here never reach the history, and the caller gets the reason.
        self._check(override)

    @workflow.query(name="status")
    def status(self) -> RunStatus:
        return self._status

    # -- messages and bookkeeping ----------------------------------------------------------------

    def _emit(self, inp: AgentRunInput, response: AgentResponse) -> None:
        self._outbox.emit(response)

    async def _flush(self) -> None:
        await self._outbox.flush()

    def _say(self, inp: AgentRunInput, kind: str, text: str) -> None:
        self._emit(inp, AgentResponse(message_type=kind, content=text, end_of_message=True))

    def _phase(self, phase: str, step: str | None = None) -> None:
        self._status.phase = phase
        if not self._settings.search_attributes:
            return
        updates = [SA_STATUS.value_set(phase), SA_AWAITING_OVERRIDE.value_set(phase == "awaiting_override")]
        if step is not None:
            updates.append(SA_CURRENT_STEP.value_set(step))
        if self._status.final_confidence is not None:
            updates.append(SA_FINAL_CONFIDENCE.value_set(self._status.final_confidence))
        workflow.upsert_search_attributes(updates)

    def _retry_policy(self) -> RetryPolicy:
        s = self._settings
        return RetryPolicy(
            initial_interval=timedelta(milliseconds=500),
            backoff_coefficient=s.retry_backoff_factor,
            maximum_interval=timedelta(seconds=s.max_retry_delay_s),
            maximum_attempts=s.max_retries + 1,
        )

    @staticmethod
    def _iso_now() -> str:
        return workflow.now().isoformat().replace("+00:00", "Z")

    # -- run -------------------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: AgentRunInput) -> AgentRunResult:
        started = workflow.now()
        # Runs started before the router existed replay without it. Asked first, before any local activity:
        # a patch marker recorded after one does not replay in the same place.
        self._with_router = workflow.patched("intent-router")
        base = inp.settings
        if base is None:  # the worker's own configuration, recorded in the history for replay
            base = await workflow.execute_local_activity(
                "agent_settings", result_type=AgentSettings, start_to_close_timeout=timedelta(seconds=10))
        self._settings, notes = apply_request_overrides(base, inp.request.plan)
        self._notes.extend(notes)
        try:
            result = await self._run(inp, notes)
        except RunAborted as exc:
            self._phase("aborted")
            self._emit(inp, error_response(exc.message))
            result = AgentRunResult(answer="", error=exc.message, plan=self._status.plan)
        except ActivityError as exc:
            message = f"The agent could not finish: {failure_message(exc)}"
            workflow.logger.warning("run failed: %s", message)
            result = await self._fail(inp, message)
        await self._flush()
        await self._record(inp, result, started)
        return result

    async def _run(self, inp: AgentRunInput, notes: list[str]) -> AgentRunResult:
        question = inp.request.question
        self._phase("planning")
        if notes:
            self._say(inp, "observation", "Request settings: " + "; ".join(notes))
        if self._settings.router_enabled and self._with_router:
            route: RouteOutput = await workflow.execute_activity(
                "route", RouteInput(question=question), result_type=RouteOutput, task_queue=inp.queues.planning,
                start_to_close_timeout=timedelta(milliseconds=self._settings.planning_timeout_ms),
                retry_policy=self._retry_policy())
            if route.intent is Intent.ACTION:
                return await self._run_action(inp)
            if route.intent is Intent.ANSWER:
                return await self._run_direct_answer(inp)
        self._say(inp, "thought", f"Planning how to answer: {question}")
        planning: PlanningOutput = await workflow.execute_activity(
            "plan",
            PlanningInput(question=question, plan_id=workflow.info().workflow_id, settings=self._settings),
            result_type=PlanningOutput,
            task_queue=inp.queues.planning,
            start_to_close_timeout=timedelta(milliseconds=self._settings.planning_timeout_ms),
            retry_policy=self._retry_policy(),
        )
        if planning.plan is None:
            return await self._fail(inp, planning.error or "The planner produced no plan.")
        plan = planning.plan
        self._status.plan = plan
        self._status.steps = [StepStatus(step_id=s.id, function=s.function, threshold=s.confidence_threshold)
                              for s in plan.steps]
        self._metrics.plan_steps = len(plan.steps)
        self._say(inp, "observation", f"Plan with {len(plan.steps)} step(s):\n{describe_plan(plan)}")

        self._phase("executing")
        results = await self._execute(inp, plan)
        usable = [r for r in results if r.success]
        score, why = overall_confidence([r.confidence.score for r in usable], len(plan.steps))
        self._status.final_confidence = score
        self._phase("synthesizing")
        answer, synthesis = await self._synthesize(inp, plan, usable, results)
        confidence_line = self._confidence_line(score, why, usable)
        final = f"{answer}\n\n{confidence_line}"
        self._phase("completed")
        await self._answer(inp, final, synthesis)
        return AgentRunResult(answer=final, confidence=score, plan=plan, step_results=results)

    async def _run_direct_answer(self, inp: AgentRunInput) -> AgentRunResult:
        """The router's ANSWER: no plan, no tools, no graph."""
        self._say(inp, "thought", "Intent: ANSWER - no data needed, answering directly.")
        self._phase("synthesizing")
        synthesis: SynthesisOutput = await workflow.execute_activity(
            "answer_directly", RouteInput(question=inp.request.question), result_type=SynthesisOutput,
            task_queue=inp.queues.synthesis,
            start_to_close_timeout=timedelta(milliseconds=self._settings.planning_timeout_ms),
            retry_policy=self._retry_policy())
        answer = f"{synthesis.answer}\n\nConfidence: not scored - a direct answer, not drawn from the knowledge graph"
        self._phase("completed")
        await self._answer(inp, answer, synthesis)
        return AgentRunResult(answer=answer)

    async def _fail(self, inp: AgentRunInput, message: str) -> AgentRunResult:
        """Tell the caller, unless the bridge will hand the request to the existing agent instead."""
        self._phase("failed")
        if inp.fallback_on_failure:
            return AgentRunResult(answer="", error=message, plan=self._status.plan, needs_fallback=True)
        self._emit(inp, error_response(message))
        return AgentRunResult(answer="", error=message, plan=self._status.plan)

    async def _synthesize(self, inp: AgentRunInput, plan: ExecutionPlan, usable: list[StepResult],
                          results: list[StepResult]) -> tuple[str, SynthesisOutput | None]:
        if not usable:
            reasons = "; ".join(f"{r.step_id}: {r.confidence.reasoning}" for r in results) or "no step ran"
            return f"I could not establish an answer with enough confidence. What is known: {reasons}.", None
        synthesis: SynthesisOutput = await workflow.execute_activity(
            "synthesize",
            SynthesisInput(
                question=inp.request.question,
                results=[SupportingResult(step_id=r.step_id, function=plan.step(r.step_id).function,
                                          output=r.output, score=r.confidence.score) for r in usable],
                max_context_size=self._settings.max_context_size,
            ),
            result_type=SynthesisOutput,
            task_queue=inp.queues.synthesis,
            start_to_close_timeout=timedelta(milliseconds=self._settings.planning_timeout_ms),
            retry_policy=self._retry_policy(),
        )
        return synthesis.answer, synthesis

    def _confidence_line(self, score: float, why: str, usable: list[StepResult]) -> str:
        parts = [why]
        if usable:
            weakest = min(usable, key=lambda r: r.confidence.score)
            parts.append(f"{weakest.step_id}: {weakest.confidence.reasoning}")
        not_usable = [s for s in self._status.steps if s.state not in (
            StepState.SUCCEEDED, StepState.ACCEPTED_BY_OVERRIDE)]
        if not_usable:
            parts.append("not used: " + ", ".join(f"{s.step_id} ({s.state.value})" for s in not_usable))
        low = " (low)" if score < LOW_CONFIDENCE else ""
        return f"Confidence: {score:.2f}{low} - " + "; ".join(parts)

    async def _answer(self, inp: AgentRunInput, answer: str, synthesis: SynthesisOutput | None) -> None:
        tokens = ({"in_token": synthesis.in_tokens, "out_token": synthesis.out_tokens, "model": synthesis.model}
                  if synthesis else {})
        if inp.request.streaming:
            # TrustGraph's streaming shape: chunks with end_of_message false, then an empty closing answer.
            for chunk in answer_chunks(answer):
                self._emit(inp, AgentResponse(message_type="answer", content=chunk, end_of_message=False))
            self._emit(inp, AgentResponse(message_type="answer", content="", end_of_message=True,
                                                end_of_dialog=True, **tokens))
        else:
            self._emit(inp, AgentResponse(message_type="answer", content=answer, end_of_message=True,
                                                end_of_dialog=True, **tokens))

    # -- flow controller -------------------------------------------------------------------------

    async def _execute(self, inp: AgentRunInput, plan: ExecutionPlan) -> list[StepResult]:
        outputs: dict[str, str] = {}
        results: dict[str, StepResult] = {}
        done: set[str] = set()
        blocked: set[str] = set()
        iterations = 0
        width = self._settings.max_parallel_steps if self._settings.parallel_execution else 1
        while True:
            ready = ready_steps(plan, done, blocked)
            if not ready:
                break
            iterations += 1
            if iterations > self._settings.max_iterations:
                self._say(inp, "observation",
                                f"Stopped after {self._settings.max_iterations} iterations (max_iterations).")
                break
            batch = ready[:width]
            step_results = await asyncio.gather(*(self._run_step(inp, s, outputs) for s in batch))
            for step, result in zip(batch, step_results, strict=True):
                results[step.id] = result
                done.add(step.id)
                if result.success:
                    outputs[step.id] = result.output
                    continue
                skipped = [d for d in dependents_of(plan, step.id) if d not in blocked]
                blocked.update(skipped)
                for dependent in skipped:
                    self._status.step(dependent).state = StepState.SKIPPED
                if skipped:
                    self._say(inp, "observation",
                                    f"Skipping {', '.join(skipped)}: they depend on step {step.id}, which has no "
                                    "usable result.")
        return [results[s.id] for s in plan.steps if s.id in results]

    async def _attempt(self, inp: AgentRunInput, step: ExecutionStep, arguments: dict[str, str],
                       context: dict[str, str], retry: int) -> StepOutput:
        started = workflow.now()
        try:
            out: StepOutput = await workflow.execute_activity(
                step.function,
                StepInput(question=inp.request.question, step=step.model_copy(update={"arguments": arguments}),
                          context=context, retry_count=retry, run_id=workflow.info().workflow_id),
                result_type=StepOutput,
                task_queue=inp.queues.tools,
                start_to_close_timeout=timedelta(milliseconds=step.timeout_ms),
                retry_policy=self._retry_policy(),
            )
        except ActivityError as exc:
            message = failure_message(exc)
            out = StepOutput(success=False, output=f"{step.function} failed: {message}", error=message,
                             confidence=ConfidenceMetrics(score=0.0, reasoning=f"the tool failed: {message}",
                                                          retry_count=retry))
        seconds = (workflow.now() - started).total_seconds()
        self._metrics.step_timings.append(StepTiming(function=step.function, seconds=seconds))
        self._metrics.scores.append((step.function, out.confidence.score))
        return out

    async def _adjust(self, inp: AgentRunInput, step: ExecutionStep, arguments: dict[str, str],
                      last: StepOutput, rung: Rung) -> dict[str, str]:
        if rung is Rung.ADJUSTED and step.function == "GraphQuery":
            broadened = broaden_cypher(arguments.get("query", ""))
            if broadened:
                return {**arguments, "query": broadened}
        try:
            adjusted: AdjustOutput = await workflow.execute_activity(
                "adjust_step",
                AdjustInput(question=inp.request.question, step=step.model_copy(update={"arguments": arguments}),
                            rung=rung.value, last_output=trim(last.output, 2000),
                            reasoning=last.confidence.reasoning),
                result_type=AdjustOutput,
                task_queue=inp.queues.planning,
                start_to_close_timeout=timedelta(milliseconds=self._settings.planning_timeout_ms),
                retry_policy=self._retry_policy(),
            )
        except ActivityError as exc:
            workflow.logger.warning("adjust_step failed, retrying with the same arguments: %s", exc)
            return arguments
        return adjusted.arguments

    async def _run_step(self, inp: AgentRunInput, step: ExecutionStep, outputs: dict[str, str]) -> StepResult:
        status = self._status.step(step.id)
        status.state = StepState.RUNNING
        self._phase("executing", step.id)
        audit = StepAudit(step_id=step.id, function=step.function, start_time=self._iso_now(), end_time="",
                          confidence_score=None, retry_count=0, success=False, outcome="running")
        self._audit[step.id] = audit
        context = select_context(outputs, step.dependencies, self._settings.max_context_size)
        arguments = dict(step.arguments)
        rung = Rung.SAME
        retry = 0
        ladder_done = False
        while True:
            args_text = "; ".join(f"{k}={v}" for k, v in arguments.items())
            attempt_label = f" (retry {retry})" if retry else ""
            self._say(inp, "thought", f"Step {step.id}{attempt_label}: {step.function}({args_text})")
            out = await self._attempt(inp, step, arguments, context, retry)
            score = out.confidence.score
            status.score, status.reasoning, status.retries = score, out.confidence.reasoning, retry
            audit.attempts.append(AttemptAudit(rung=rung.value if retry else "initial", arguments=arguments,
                                               confidence_score=score, reasoning=out.confidence.reasoning,
                                               output=out.output))
            met = out.success and score >= step.confidence_threshold
            verdict = "meets" if met else "is below"
            self._say(inp, "observation",
                            f"{trim(out.output, OBSERVATION_PREVIEW)}\nConfidence {score:.2f} {verdict} the "
                            f"threshold {step.confidence_threshold:.2f}: {out.confidence.reasoning}")
            if met:
                return self._finish(step, status, audit, out, retry, StepState.SUCCEEDED, success=True)
            self._metrics.below_threshold += 1
            if not ladder_done and retry < self._settings.max_retries:
                retry += 1
                rung = rung_for(retry)
                status.state = StepState.RETRYING
                self._metrics.retries[step.function] = self._metrics.retries.get(step.function, 0) + 1
                self._say(inp, "thought",
                                f"Step {step.id}: confidence {score:.2f} is below {step.confidence_threshold:.2f} "
                                f"({out.confidence.reasoning}); retry {retry} of {self._settings.max_retries}: "
                                f"{RUNG_NOTES[rung]}.")
                if rung is Rung.SAME:
                    await workflow.sleep(backoff(retry, self._settings.retry_backoff_factor,
                                                 self._settings.max_retry_delay_s))
                else:
                    arguments = await self._adjust(inp, step, arguments, out, rung)
                continue
            if not self._settings.override_enabled:
                return self._finish(step, status, audit, out, retry, StepState.LOW_CONFIDENCE, success=False)
            override = await self._ask_override(inp, step, out, retry, arguments)
            if override is None:
                self._notes.append(f"no override for step {step.id} within {self._settings.override_timeout_s:.0f} s")
                self._say(inp, "observation",
                                f"No override arrived for step {step.id} within "
                                f"{self._settings.override_timeout_s:.0f} s; continuing without its result.")
                return self._finish(step, status, audit, out, retry, StepState.LOW_CONFIDENCE, success=False)
            audit.override = {"decision": override.decision, "by": override.by, "reason": override.reason}
            who = override.by or "a human"
            decision = Decision(override.decision)
            if decision is Decision.ABORT:
                self._finish(step, status, audit, out, retry, StepState.FAILED, success=False)
                reason = f": {override.reason}" if override.reason else ""
                raise RunAborted(f"Aborted by {who} at step {step.id}{reason}")
            if decision is Decision.SKIP:
                self._say(inp, "observation", f"Step {step.id} skipped by {who}.")
                return self._finish(step, status, audit, out, retry, StepState.SKIPPED, success=False)
            if decision is Decision.ACCEPT:
                self._say(inp, "observation",
                                f"Step {step.id} accepted by {who} at confidence {score:.2f}.")
                accepted = out.model_copy(update={"confidence": out.confidence.model_copy(update={
                    "reasoning": f"{out.confidence.reasoning} (accepted by {who})"})})
                return self._finish(step, status, audit, accepted, retry, StepState.ACCEPTED_BY_OVERRIDE,
                                    success=True)
            # RETRY: once more with the human's arguments (or the same), then back to the human if still weak.
            arguments = dict(override.arguments) if override.arguments else arguments
            retry += 1
            rung = Rung.SAME
            ladder_done = True
            status.state = StepState.RETRYING
            self._metrics.retries[step.function] = self._metrics.retries.get(step.function, 0) + 1
            self._say(inp, "thought", f"Step {step.id}: retrying as {who} asked.")

    def _finish(self, step: ExecutionStep, status: StepStatus, audit: StepAudit, out: StepOutput, retry: int,
                state: StepState, *, success: bool) -> StepResult:
        status.state = state
        audit.end_time = self._iso_now()
        audit.confidence_score = out.confidence.score
        audit.retry_count = retry
        audit.success = success
        audit.outcome = state.value
        if retry:
            self._metrics.retried_steps += 1
            if state is StepState.SUCCEEDED:
                self._metrics.retried_steps_recovered += 1
        confidence = out.confidence.model_copy(update={"retry_count": retry})
        return StepResult(step_id=step.id, success=success, output=out.output, confidence=confidence,
                          execution_time_ms=out.execution_time_ms)

    async def _ask_override(self, inp: AgentRunInput, step: ExecutionStep, out: StepOutput, retries: int,
                            arguments: dict[str, str]) -> Override | None:
        request = OverrideRequest(
            step_id=step.id, function=step.function, score=out.confidence.score,
            threshold=step.confidence_threshold, reasoning=out.confidence.reasoning, retries=retries,
            arguments=arguments, timeout_s=self._settings.override_timeout_s,
        )
        what = (f"Override needed for step {step.id} ({step.function}): confidence {request.score:.2f} is below "
                f"the threshold {request.threshold:.2f} after {retries} retries ({request.reasoning}). Choices: "
                f"accept, retry (optionally with new arguments), skip, abort.")
        return await self._wait_for_override(inp, request, what)

    async def _wait_for_override(self, inp: AgentRunInput, request: OverrideRequest, what: str) -> Override | None:
        """Ask a human (signal, update or Pulsar follow-up) and wait up to the request's timeout."""
        async with self._override_lock:  # one pending override at a time, even with parallel steps
            step_id = request.step_id
            self._status.pending_override = request
            self._status.step(step_id).state = StepState.AWAITING_OVERRIDE
            self._phase("awaiting_override", step_id)
            workflow_id = workflow.info().workflow_id
            self._say(inp, "observation", (
                f"{what} Waiting {request.timeout_s:.0f} s. Answer with: tg-confidence override {workflow_id} "
                f"{step_id} accept -- or: temporal workflow signal --workflow-id {workflow_id} --name override "
                f"--input '{{\"step_id\": \"{step_id}\", \"decision\": \"accept\"}}' -- or an AgentRequest with "
                f"state \"override\", correlation_id \"{workflow_id}\" and question \"{step_id} accept\""
            ))
            try:
                await workflow.wait_condition(lambda: step_id in self._overrides,
                                              timeout=timedelta(seconds=request.timeout_s))
            except TimeoutError:
                return None
            finally:
                self._status.pending_override = None
                self._phase("executing", step_id)
            return self._overrides.pop(step_id)

    # -- audit and metrics -----------------------------------------------------------------------

    async def _record(self, inp: AgentRunInput, result: AgentRunResult, started) -> None:  # type: ignore[no-untyped-def]
        """Metrics and the audit record, in one activity at the end of the run."""
        elapsed = workflow.now() - started
        self._metrics.plan_seconds = elapsed.total_seconds()
        plan = result.plan
        record = None
        if self._settings.audit_enabled:
            record = AuditRecord(
                execution_id=workflow.info().workflow_id,
                timestamp=started.isoformat().replace("+00:00", "Z"),
                request={"question": inp.request.question, "request_id": inp.request_id,
                         "confidence_threshold": self._settings.confidence_threshold,
                         "max_retries": self._settings.max_retries},
                plan={"steps": [{"id": s.id, "function": s.function, "confidence_threshold": s.confidence_threshold,
                                 "dependencies": s.dependencies, "arguments": s.arguments}
                                for s in (plan.steps if plan else [])]},
                execution=[self._audit[s.id] for s in (plan.steps if plan else []) if s.id in self._audit],
                final_confidence=result.confidence,
                total_duration_ms=int(elapsed.total_seconds() * 1000),
                outcome=self._status.phase if result.error is None else f"{self._status.phase}: {result.error}",
                notes=self._notes,
            )
        await workflow.execute_activity(
            "record_run",
            RunRecord(metrics=self._metrics, audit=record, include_raw_outputs=self._settings.include_raw_outputs),
            task_queue=inp.queues.audit, start_to_close_timeout=timedelta(seconds=30), retry_policy=EMIT_RETRY,
            schedule_to_close_timeout=timedelta(minutes=10),
        )
