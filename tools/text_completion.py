"""TextCompletion: the language model reasons over the outputs of the steps the step depends on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from confidence.overall import text_result_confidence
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolSpec
from planning.step_context import format_context
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends


class TextCompletion(Tool):
    spec = ToolSpec(
        offered_by_default=True,
        position=20,
        name="TextCompletion",
        description=(
            "Ask the language model to reason over text. It sees the outputs of the steps it depends on, "
            "so use it to interpret, compare or summarise earlier results."
        ),
        arguments=[ToolArgument(name="prompt", description="the instruction for the language model")],
        default_threshold=0.7,
    )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        prompts = backends.prompts
        completion = await backends.llm.chat(
            [
                {"role": "system", "content": prompts.render("text_completion_system")},
                {
                    "role": "user",
                    "content": prompts.render(
                        "text_completion_user",
                        prompt=request.step.arguments.get("prompt", ""),
                        context=format_context(request.context),
                    ),
                },
            ]
        )
        # Scored by how much of it the earlier results support: the model's own certainty is no evidence.
        evidence = "\n".join(request.context.values())
        return StepOutput(
            success=bool(completion.text.strip()),
            output=completion.text,
            confidence=text_result_confidence(completion.text, evidence, request.retry_count),
        )
