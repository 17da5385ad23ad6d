"""Prompt: apply a named prompt template (the service's own, or TrustGraph's prompt service)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from confidence.overall import text_result_confidence
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolScope, ToolSpec
from planning.step_context import format_context
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends


class Prompt(Tool):
    spec = ToolSpec(
        offered_by_default=True,
        position=40,
        name="Prompt",
        description="Apply a named prompt template to some input and to the results of the steps it depends on.",
        arguments=[
            ToolArgument(name="template", description="one of the template names"),
            ToolArgument(name="input", description="the text or instruction the template works on"),
        ],
        choice_argument="template",
    )

    async def describe(self, backends: Backends, scope: ToolScope | None = None) -> ToolSpec | None:
        templates = {
            name: text
            for name, text in backends.templates.templates().items()
            if scope is None or scope.admits(backends.templates.access(name))
        }
        if not templates:
            return None
        listing = "; ".join(f"{name}: {text}" for name, text in templates.items())
        return self.spec.model_copy(
            update={
                "description": f"{self.spec.description} Templates: {listing}",
                "choices": {name: {} for name in templates},
            }
        )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        name = request.step.arguments.get("template", "")
        known = backends.templates.templates()
        if name not in known:
            message = f"unknown template {name!r}; known: {', '.join(known)}"
            return StepOutput(
                success=False,
                output=message,
                error="template",
                deterministic=True,
                confidence=text_result_confidence("", "", request.retry_count),
            )
        text = await backends.templates.apply(
            name, request.step.arguments.get("input", ""), format_context(request.context)
        )
        evidence = "\n".join(request.context.values())
        return StepOutput(
            success=bool(text.strip()),
            output=text,
            confidence=text_result_confidence(text, evidence, request.retry_count),
        )
