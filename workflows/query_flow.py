"""The query path: plan -> run the plan's DAG, each step under confidence control -> synthesize an
answer from the usable results, with the overall confidence and why. And the router's ANSWER intent:
a direct answer with no plan and no tools."""

from __future__ import annotations

import asyncio

from temporalio import workflow

from workflows.errors import LOCAL_ACTIVITY_FAILED
from workflows.run_context import RunContext
from workflows.step_runner import StepRunner
from workflows.turn_memory import TurnMemory

with workflow.unsafe.imports_passed_through():
    from actions.catalogue import CATALOGUE, CATALOGUE_CONFIDENCE
    from confidence.evidence import run_evidence
    from confidence.overall import LOW_CONFIDENCE, overall_confidence
    from contracts.conversation import FollowUpInput
    from contracts.names import Activities
    from contracts.plan import ExecutionPlan, StepResult
    from contracts.query_path import PlanningInput, PlanningOutput, SupportingResult, SynthesisInput, SynthesisOutput
    from contracts.routing import RouteInput
    from contracts.run import AgentRunResult, RequestScope, StepState, StepStatus
    from planning.conversation_memory import conversation_confidence
    from planning.dag import dependents_of, ready_steps
    from planning.plan_parser import describe_plan


VERIFICATION_NOTES = {
    "verified": "every name and figure in the answer is in the results",
    "rewritten": "the answer was rewritten: a first draft stated {claims}, which the results do not contain",
    "composed": "the answer is the results themselves: written answers stated {claims}, which they do not contain",
    "absent": "the answer states what the graph does not hold, from the results alone",
    "declined": "the answer says the results lack what was asked, though rows came back: it is no answer",
    "ranked": "the answer is read from the ranking: the written one named another row than the query ranked first "
    "or misstated their figures",
    "restated": "the answer is the results themselves: the written one lacked the name or figure asked for",
}


# The answer's first sentences went out as the model wrote them, before the whole answer was checked: they stand,
# and what the checks found follows them.
STREAMED_CORRECTION = (
    "the first sentences were sent as written, before the whole answer was checked, and the "
    "checked answer follows them as a correction"
)


class QueryPath:
    def __init__(self, ctx: RunContext, steps: StepRunner) -> None:
        self.ctx = ctx
        self.steps = steps

    async def run(self) -> AgentRunResult:
        ctx = self.ctx
        ctx.say("thought", f"Planning how to answer: {ctx.question}")
        planning = await ctx.options.planning.run(
            Activities.PLAN,
            PlanningInput(
                question=ctx.question,
                plan_id=ctx.workflow_id,
                settings=ctx.settings,
                scope=RequestScope.of(ctx.inp.request),
            ),
            PlanningOutput,
            summary="plan the steps",
        )
        if planning.plan is None:
            return await ctx.fail(planning.error or "The planner produced no plan.")
        plan = planning.plan
        if planning.note:
            ctx.say("observation", planning.note)
        ctx.status.plan = plan
        ctx.status.steps = [
            StepStatus(step_id=s.id, function=s.function, threshold=s.confidence_threshold) for s in plan.steps
        ]
        ctx.metrics.plan_steps = len(plan.steps)
        said = f"Plan with {len(plan.steps)} step(s):\n{describe_plan(plan)}"
        if planning.evidence_note:  # what the confidence will lack, said with the plan and kept in the audit
            said = f"{said}\n{planning.evidence_note}"
            ctx.notes.append(planning.evidence_note)
        ctx.say("observation", said)
        ctx.trace.planned(plan)

        ctx.phase("executing")
        results = await self.execute(plan)
        usable = [r for r in results if r.success]
        evidence_score, why = overall_confidence([r.confidence.score for r in usable], len(plan.steps))
        evidence = {
            **run_evidence([r.confidence for r in usable], len(plan.steps)),
            **planning.token_evidence,
            **planning.program_evidence,
        }
        ctx.phase("synthesizing")
        # A query code chose reads what was asked; what the graph stores about the names around it would only
        # lend the answer writer other figures and names (a country's own population for its neighbours').
        facts = [] if planning.program_evidence else planning.grounding.facts
        answer, synthesis = await self._synthesize(
            plan, usable, results, evidence, facts, evidence_score, planning.unexplained, planning.unused
        )
        score = evidence_score
        if synthesis is not None:
            evidence = synthesis.evidence or evidence
            if synthesis.confidence is not None:  # calibrated: the probability that the answer is right
                score = synthesis.confidence
            elif synthesis.confidence_reasons:  # the calibrator could not be used: kept in the audit record
                ctx.notes.append(synthesis.confidence_reasons)
            why = "; ".join(filter(None, [synthesis.confidence_reasons, why]))
        ctx.status.final_confidence = score
        ctx.evidence = evidence
        final = f"{answer}\n\n{self._confidence_line(score, why, usable, synthesis)}"
        ctx.phase("completed")
        await ctx.answer(final, synthesis, why)
        return AgentRunResult(
            answer=final,
            confidence=score,
            plan=plan,
            step_results=results,
            evidence=evidence,
            evidence_score=evidence_score,
        )

    async def answer_directly(self) -> AgentRunResult:
        """The router's ANSWER: no plan, no tools, no graph."""
        ctx = self.ctx
        ctx.say("thought", "Intent: ANSWER - no data needed, answering directly.")
        ctx.phase("synthesizing")
        synthesis = await ctx.options.synthesis.run(
            Activities.ANSWER_DIRECTLY,
            RouteInput(question=ctx.question),
            SynthesisOutput,
            summary="answer without tools",
        )
        confidence = None
        how = "not scored - a direct answer, not drawn from the knowledge graph"
        if synthesis.verification == CATALOGUE:  # a question about the actions
            confidence = ctx.status.final_confidence = CATALOGUE_CONFIDENCE
            how = f"{confidence:.2f} - read from the action definitions; nothing was changed"
        answer = f"{synthesis.answer}\n\nConfidence: {how}"
        ctx.phase("completed")
        await ctx.answer(answer, synthesis, how)
        return AgentRunResult(answer=answer, confidence=confidence)

    async def answer_from_conversation(self, turn: TurnMemory) -> AgentRunResult:
        """A follow-up the conversation already answers: no plan, no graph; checked against the conversation."""
        ctx = self.ctx
        ctx.say("thought", "The conversation already holds the answer: answering from it, without the graph.")
        ctx.phase("synthesizing")
        synthesis = await ctx.options.synthesis.run(
            Activities.ANSWER_FROM_CONVERSATION,
            FollowUpInput(question=ctx.question, conversation=turn.text),
            SynthesisOutput,
            summary="answer from the conversation",
        )
        score, why = conversation_confidence(turn.memory, synthesis.verification, synthesis.unsupported)
        ctx.status.final_confidence = score
        answer = f"{synthesis.answer}\n\nConfidence: {score:.2f}{' (low)' if score < LOW_CONFIDENCE else ''} - {why}"
        ctx.phase("completed")
        await ctx.answer(answer, synthesis, why)
        return AgentRunResult(answer=answer, confidence=score)

    async def execute(self, plan: ExecutionPlan) -> list[StepResult]:
        """Ready steps in plan order, `max_parallel_steps` at a time when parallel; the dependents of a step
        without a usable result are skipped and reported."""
        ctx, settings = self.ctx, self.ctx.settings
        outputs: dict[str, str] = {}
        results: dict[str, StepResult] = {}
        done: set[str] = set()
        blocked: set[str] = set()
        iterations = 0
        width = settings.max_parallel_steps if settings.parallel_execution else 1
        while ready := ready_steps(plan, done, blocked):
            iterations += 1
            if iterations > settings.max_iterations:
                ctx.say("observation", f"Stopped after {settings.max_iterations} iterations (max_iterations).")
                break
            batch = ready[:width]
            step_results = await asyncio.gather(*(self.steps.run(s, outputs) for s in batch))
            for step, result in zip(batch, step_results, strict=True):
                results[step.id] = result
                done.add(step.id)
                if result.success:
                    outputs[step.id] = result.output
                    continue
                skipped = [d for d in dependents_of(plan, step.id) if d not in blocked]
                blocked.update(skipped)
                for dependent in skipped:
                    ctx.status.step(dependent).state = StepState.SKIPPED
                if skipped:
                    ctx.say(
                        "observation",
                        f"Skipping {', '.join(skipped)}: they depend on step {step.id}, which has no usable result.",
                    )
        return [results[s.id] for s in plan.steps if s.id in results]

    async def _synthesize(
        self,
        plan: ExecutionPlan,
        usable: list[StepResult],
        results: list[StepResult],
        evidence: dict[str, float],
        facts: list[str],
        evidence_score: float | None = None,
        unexplained: list[str] | None = None,
        unused: list[str] | None = None,
    ) -> tuple[str, SynthesisOutput | None]:
        if not usable:
            reasons = "; ".join(f"{r.step_id}: {r.confidence.reasoning}" for r in results) or "no step ran"
            return f"I could not establish an answer with enough confidence. What is known: {reasons}.", None
        stream = self.ctx.answer_stream()
        if stream is not None:
            # Every message before the answer reaches the caller before its first released sentence.
            try:
                await self.ctx.outbox.flush()
            except LOCAL_ACTIVITY_FAILED:
                stream = None  # they did not all go out: nothing more is sent early (the run's end says so)
        synthesis = await self.ctx.options.synthesis.run(
            Activities.SYNTHESIZE,
            SynthesisInput(
                question=self.ctx.question,
                results=[
                    SupportingResult(
                        step_id=r.step_id,
                        function=plan.step(r.step_id).function,
                        output=r.output,
                        score=r.confidence.score,
                        signals=r.confidence.signals,
                        names=r.confidence.names,
                        retry_count=r.confidence.retry_count,
                    )
                    for r in usable
                ],
                max_context_size=self.ctx.settings.max_context_size,
                evidence=evidence,
                facts=facts,
                evidence_score=evidence_score,
                stream=stream,
                unexplained=unexplained or [],
                unused=unused or [],
            ),
            SynthesisOutput,
            summary=f"write the answer from {len(usable)} result(s)",
        )
        return synthesis.answer, synthesis

    def _confidence_line(
        self, score: float, why: str, usable: list[StepResult], synthesis: SynthesisOutput | None = None
    ) -> str:
        parts = [why]
        checked = VERIFICATION_NOTES.get(synthesis.verification, "") if synthesis else ""
        if checked:
            parts.append(checked.format(claims=", ".join(synthesis.unsupported[:5]) if synthesis else ""))
        if synthesis is not None and synthesis.corrected:
            parts.append(STREAMED_CORRECTION)
        if usable:
            weakest = min(usable, key=lambda r: r.confidence.score)
            parts.append(f"{weakest.step_id}: {weakest.confidence.reasoning}")
        not_usable = [
            s for s in self.ctx.status.steps if s.state not in (StepState.SUCCEEDED, StepState.ACCEPTED_BY_OVERRIDE)
        ]
        if not_usable:
            parts.append("not used: " + ", ".join(f"{s.step_id} ({s.state.value})" for s in not_usable))
        low = " (low)" if score < LOW_CONFIDENCE else ""
        return f"Confidence: {score:.2f}{low} - " + "; ".join(parts)
