"""ToolService: call a tool TrustGraph's config serves with a tool service of its own (a `tool` entry of type
`tool-service`), as TrustGraph's agent calls it (backends/trustgraph_tool_service.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from temporalio.exceptions import ApplicationError

from backends.trustgraph_tool_service import call_tool_service
from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolScope, ToolSpec, json_schema_summary
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends
    from backends.trustgraph_config import ConfiguredTool

KIND = "tool-service"  # TrustGraph's tool type


def score_reply(text: str, retry_count: int = 0) -> ConfidenceMetrics:
    """A tool service declares no output schema: an answer is plausible, nothing is weak."""
    if not text.strip():
        return ConfidenceMetrics(score=0.2, reasoning="the tool service returned nothing", retry_count=retry_count)
    return ConfidenceMetrics(
        score=0.7,
        retry_count=retry_count,
        reasoning="text output; the tool service declares no schema to check it against",
    )


def approval_reason(tool: ConfiguredTool) -> str:
    """Why calling it waits for a human: TrustGraph's config cannot mark a tool service read-only."""
    service = tool.service.service if tool.service is not None else "?"
    return f"the tool {tool.name} (TrustGraph tool service {service}) is not marked read-only, so it may change things"


def _refused(message: str, retry_count: int) -> StepOutput:
    return StepOutput(
        success=False,
        output=message,
        error="tool-service",
        deterministic=True,
        confidence=ConfidenceMetrics(score=0.1, reasoning=message, retry_count=retry_count),
    )


def configured(backends: Backends) -> dict[str, ConfiguredTool]:
    config = backends.trustgraph_config
    return config.current.of_kind(KIND) if config is not None else {}


class ToolService(Tool):
    spec = ToolSpec(
        offered_by_default=True,
        position=55,
        name="ToolService",
        description="Call a tool that TrustGraph serves with a tool service of its own.",
        arguments=[
            ToolArgument(name="tool", description="the tool's name"),
            ToolArgument(name="arguments", description="the tool's input as a JSON object"),
        ],
        default_threshold=0.6,
        choice_argument="tool",
        json_argument="arguments",
    )

    def available(self, backends: Backends) -> bool:
        return backends.trustgraph_config is not None

    async def describe(self, backends: Backends, scope: ToolScope | None = None) -> ToolSpec | None:
        """The tool-service tools TrustGraph's config holds now (those the request may use); None when none."""
        found = {name: t for name, t in configured(backends).items() if scope is None or scope.admits(t.access)}
        if not found:
            return None
        listing = "; ".join(
            f"{name} ({t.description}) input {json_schema_summary(t.input_schema())}" for name, t in found.items()
        )
        return self.spec.model_copy(
            update={
                "description": f"{self.spec.description} Tools: {listing}",
                "choices": {name: t.input_schema() for name, t in found.items()},
            }
        )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        name = request.step.arguments.get("tool", "")
        tool = configured(backends).get(name)
        if tool is None or tool.service is None or backends.trustgraph_config is None:
            return _refused(f"TrustGraph's config holds no tool-service tool {name!r} now", request.retry_count)
        try:
            arguments = json.loads(request.step.arguments.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            return _refused(f"arguments are not JSON: {exc}", request.retry_count)
        if not request.approved:
            why = approval_reason(tool)
            return StepOutput(
                success=False,
                output=f"{name} was not called: {why}",
                needs_approval=why,
                deterministic=True,
                confidence=ConfidenceMetrics(
                    score=0.0, reasoning=f"not called: {why}", retry_count=request.retry_count
                ),
            )
        try:
            text = await call_tool_service(
                backends.trustgraph_config.rr, tool.service, arguments, timeout_s=request.step.timeout_ms / 1000
            )
        except ApplicationError as exc:
            if exc.type != "TrustGraphError":
                raise  # no answer in time: Temporal tries again
            # The service answered with an error (TrustGraph's agent gives it to the model as the observation).
            return StepOutput(
                success=False,
                output=str(exc),
                error=str(exc),
                confidence=ConfidenceMetrics(
                    score=0.1,
                    reasoning=f"the tool service reported an error: {exc}"[:300],
                    retry_count=request.retry_count,
                ),
            )
        return StepOutput(success=bool(text.strip()), output=text, confidence=score_reply(text, request.retry_count))
