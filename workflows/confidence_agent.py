"""ConfidenceAgentWorkflow: plan -> run the steps of the DAG -> synthesize, streaming every message.

Deterministic orchestration only: every side effect (LLM, graph, Pulsar) is an activity, and the
messages for the caller go through the bridge's `emit` activity, one at a time so they stay in order.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from confidence_core.activity_io import (
        EmitInput,
        PlanningInput,
        PlanningOutput,
        StepInput,
        StepOutput,
        SupportingResult,
        SynthesisInput,
        SynthesisOutput,
    )
    from confidence_core.confidence import overall_confidence
    from confidence_core.dag import dependents_of, ready_steps
    from confidence_core.memory import select_context, trim
    from confidence_core.models import (
        AgentResponse,
        AgentRunInput,
        AgentRunResult,
        ConfidenceMetrics,
        ExecutionPlan,
        ExecutionStep,
        StepResult,
    )
    from confidence_core.plan_parser import describe_plan
    from confidence_core.wire import error_response

WORKFLOW_NAME = "ConfidenceAgentWorkflow"
OBSERVATION_PREVIEW = 1200
EMIT_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10))


def failure_message(exc: BaseException) -> str:
    """The innermost cause's message: what actually went wrong, not Temporal's wrapper text."""
    while isinstance(exc, ActivityError) and exc.cause is not None:
        exc = exc.cause
    return exc.message if isinstance(exc, ApplicationError) else str(exc)


@workflow.defn(name=WORKFLOW_NAME)
class ConfidenceAgentWorkflow:
    def __init__(self) -> None:
        self._seq = 0
        self._emit_lock = asyncio.Lock()

    # -- messages ------------------------------------------------------------------------------

    async def _emit(self, inp: AgentRunInput, response: AgentResponse) -> None:
        async with self._emit_lock:
            self._seq += 1
            # Stable per message: an emit retried after a timeout carries the same id, so clients dedupe.
            response.message_id = f"{workflow.info().workflow_id}#{self._seq}"
            await workflow.execute_activity(
                "emit",
                EmitInput(topic=inp.response_topic, request_id=inp.request_id, response=response),
                task_queue=inp.queues.bridge,
                start_to_close_timeout=timedelta(seconds=30),
                schedule_to_close_timeout=timedelta(minutes=10),
                retry_policy=EMIT_RETRY,
            )

    async def _say(self, inp: AgentRunInput, kind: str, text: str) -> None:
        await self._emit(inp, AgentResponse(message_type=kind, content=text, end_of_message=True))

    def _retry_policy(self, inp: AgentRunInput) -> RetryPolicy:
        s = inp.settings
        return RetryPolicy(
            initial_interval=timedelta(milliseconds=500),
            backoff_coefficient=s.retry_backoff_factor,
            maximum_interval=timedelta(seconds=s.max_retry_delay_s),
            maximum_attempts=s.max_retries + 1,
        )

    # -- run -----------------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: AgentRunInput) -> AgentRunResult:
        try:
            return await self._run(inp)
        except ActivityError as exc:
            message = f"The agent could not finish: {failure_message(exc)}"
            workflow.logger.warning("run failed: %s", message)
            await self._emit(inp, error_response(message))
            return AgentRunResult(answer="", error=message)

    async def _run(self, inp: AgentRunInput) -> AgentRunResult:
        question = inp.request.question
        await self._say(inp, "thought", f"Planning how to answer: {question}")
        planning: PlanningOutput = await workflow.execute_activity(
            "plan",
            PlanningInput(question=question, plan_id=workflow.info().workflow_id, settings=inp.settings),
            result_type=PlanningOutput,
            task_queue=inp.queues.planning,
            start_to_close_timeout=timedelta(milliseconds=inp.settings.planning_timeout_ms),
            retry_policy=self._retry_policy(inp),
        )
        if planning.plan is None:
            message = planning.error or "The planner produced no plan."
            await self._emit(inp, error_response(message))
            return AgentRunResult(answer="", error=message)
        plan = planning.plan
        await self._say(inp, "observation", f"Plan with {len(plan.steps)} step(s):\n{describe_plan(plan)}")

        results = await self._execute(inp, plan)
        supporting = [r for r in results if r.success]
        synthesis: SynthesisOutput = await workflow.execute_activity(
            "synthesize",
            SynthesisInput(
                question=question,
                results=[SupportingResult(step_id=r.step_id, function=plan.step(r.step_id).function,
                                          output=r.output, score=r.confidence.score) for r in supporting],
                max_context_size=inp.settings.max_context_size,
            ),
            result_type=SynthesisOutput,
            task_queue=inp.queues.synthesis,
            start_to_close_timeout=timedelta(milliseconds=inp.settings.planning_timeout_ms),
            retry_policy=self._retry_policy(inp),
        )
        confidence = overall_confidence([r.confidence.score for r in supporting])
        answer = f"{synthesis.answer}\n\n{self._confidence_line(confidence, supporting, results)}"
        await self._answer(inp, answer, synthesis)
        return AgentRunResult(answer=answer, confidence=confidence, plan=plan, step_results=results)

    @staticmethod
    def _confidence_line(confidence: float | None, supporting: list[StepResult], results: list[StepResult]) -> str:
        if confidence is None:
            return "Confidence: 0.00 - no step produced a usable result"
        weakest = min(supporting, key=lambda r: r.confidence.score)
        failed = len(results) - len(supporting)
        note = f"; {failed} step(s) failed" if failed else ""
        return (f"Confidence: {confidence:.2f} - weakest supporting step {weakest.step_id}: "
                f"{weakest.confidence.reasoning}{note}")

    async def _answer(self, inp: AgentRunInput, answer: str, synthesis: SynthesisOutput) -> None:
        tokens = {"in_token": synthesis.in_tokens, "out_token": synthesis.out_tokens, "model": synthesis.model}
        if inp.request.streaming:
            # TrustGraph's streaming shape: chunks with end_of_message false, then an empty closing answer.
            await self._emit(inp, AgentResponse(message_type="answer", content=answer, end_of_message=False))
            await self._emit(inp, AgentResponse(message_type="answer", content="", end_of_message=True,
                                                end_of_dialog=True, **tokens))
        else:
            await self._emit(inp, AgentResponse(message_type="answer", content=answer, end_of_message=True,
                                                end_of_dialog=True, **tokens))

    # -- flow controller -----------------------------------------------------------------------

    async def _execute(self, inp: AgentRunInput, plan: ExecutionPlan) -> list[StepResult]:
        outputs: dict[str, str] = {}
        results: dict[str, StepResult] = {}
        done: set[str] = set()
        blocked: set[str] = set()
        iterations = 0
        width = inp.settings.max_parallel_steps if inp.settings.parallel_execution else 1
        while True:
            ready = ready_steps(plan, done, set(), blocked)
            if not ready:
                break
            iterations += 1
            if iterations > inp.settings.max_iterations:
                await self._say(inp, "observation",
                                f"Stopped after {inp.settings.max_iterations} iterations (max_iterations).")
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
                if skipped:
                    await self._say(inp, "observation",
                                    f"Skipping {', '.join(skipped)}: they depend on failed step {step.id}.")
        return [results[s.id] for s in plan.steps if s.id in results]

    async def _run_step(self, inp: AgentRunInput, step: ExecutionStep, outputs: dict[str, str]) -> StepResult:
        args = "; ".join(f"{k}={v}" for k, v in step.arguments.items())
        await self._say(inp, "thought", f"Step {step.id}: {step.function}({args})")
        context = select_context(outputs, step.dependencies, inp.settings.max_context_size)
        try:
            out: StepOutput = await workflow.execute_activity(
                step.function,
                StepInput(question=inp.request.question, step=step, context=context),
                result_type=StepOutput,
                task_queue=inp.queues.tools,
                start_to_close_timeout=timedelta(milliseconds=step.timeout_ms),
                retry_policy=self._retry_policy(inp),
            )
        except ActivityError as exc:
            message = failure_message(exc)
            await self._say(inp, "observation", f"Step {step.id} failed: {message}")
            return StepResult(step_id=step.id, success=False, output=message,
                              confidence=ConfidenceMetrics(score=0.0, reasoning=message))
        verdict = "meets" if out.confidence.score >= step.confidence_threshold else "is below"
        await self._say(
            inp, "observation",
            f"{trim(out.output, OBSERVATION_PREVIEW)}\nConfidence {out.confidence.score:.2f} {verdict} the "
            f"threshold {step.confidence_threshold:.2f}: {out.confidence.reasoning}",
        )
        return StepResult(step_id=step.id, success=out.success, output=out.output,
                          confidence=out.confidence, execution_time_ms=out.execution_time_ms)
