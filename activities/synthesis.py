"""Synthesis activity: the final answer, written only from the steps that support it."""

from __future__ import annotations

from temporalio import activity

from backends.llm import ChatModel
from confidence_core.memory import trim
from contracts.names import Activities
from contracts.query_path import SynthesisInput, SynthesisOutput
from contracts.routing import RouteInput
from service.prompts import PromptTemplates


class SynthesisActivities:
    def __init__(self, llm: ChatModel, prompts: PromptTemplates) -> None:
        self.llm = llm
        self.prompts = prompts

    @activity.defn(name=Activities.SYNTHESIZE)
    async def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        share = request.max_context_size // max(1, len(request.results))
        results = "\n\n".join(
            f"[{r.step_id} {r.function}, confidence {r.score:.2f}]\n{trim(r.output, share)}"
            for r in request.results
        ) or "(no step produced a usable result)"
        completion = await self.llm.chat([
            {"role": "system", "content": self.prompts.render("synthesis_system")},
            {"role": "user", "content": self.prompts.render(
                "synthesis_user", question=request.question, results=results)},
        ], max_tokens=400)
        return SynthesisOutput(
            answer=completion.text.strip(), model=completion.model,
            in_tokens=completion.in_tokens, out_tokens=completion.out_tokens,
        )

    @activity.defn(name=Activities.ANSWER_DIRECTLY)
    async def answer_directly(self, request: RouteInput) -> SynthesisOutput:
        """The router's ANSWER intent: no tools, no graph."""
        completion = await self.llm.chat([
            {"role": "system", "content": self.prompts.render("direct_answer_system")},
            {"role": "user", "content": self.prompts.render("direct_answer_user", question=request.question)},
        ], max_tokens=400)
        return SynthesisOutput(answer=completion.text.strip(), model=completion.model,
                               in_tokens=completion.in_tokens, out_tokens=completion.out_tokens)
