"""McpTool: call a tool of a connected MCP server (or of TrustGraph's mcp-tool service)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator

from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolScope, ToolSpec, json_schema_summary
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends
    from backends.mcp import McpToolInfo


def score_call(
    is_error: bool,
    text: str,
    structured: dict[str, object] | None,
    output_schema: dict[str, object] | None,
    retry_count: int = 0,
) -> ConfidenceMetrics:
    """The MCP server's own error flag, then whether the output fits the schema the tool declares."""
    if is_error:
        return ConfidenceMetrics(
            score=0.1, reasoning=f"the MCP tool reported an error: {text[:200]}", retry_count=retry_count
        )
    if structured is not None and output_schema:
        errors = list(Draft202012Validator(output_schema).iter_errors(structured))
        if errors:
            return ConfidenceMetrics(
                score=0.4,
                retry_count=retry_count,
                reasoning=f"output does not fit the tool's declared schema: {errors[0].message}",
            )
        return ConfidenceMetrics(
            score=0.9, reasoning="structured output valid against the tool's declared schema", retry_count=retry_count
        )
    if not text.strip():
        return ConfidenceMetrics(score=0.2, reasoning="the MCP tool returned nothing", retry_count=retry_count)
    return ConfidenceMetrics(
        score=0.7, reasoning="text output; the tool declares no schema to check it against", retry_count=retry_count
    )


def approval_reason(info: McpToolInfo) -> str:
    """Why calling this tool waits for a human: what its server says (or does not say) about it."""
    kind = "marked destructive" if info.destructive else "not marked read-only"
    return f"the MCP tool {info.name} ({info.server}) is {kind} by its server, so it may change things"


def _refused(message: str, retry_count: int) -> StepOutput:
    return StepOutput(
        success=False,
        output=message,
        error="mcp",
        deterministic=True,
        confidence=score_call(True, message, None, None, retry_count),
    )


class McpTool(Tool):
    spec = ToolSpec(
        offered_by_default=True,
        position=50,
        name="McpTool",
        description="Call a tool of a connected MCP server.",
        arguments=[
            ToolArgument(name="tool", description="the MCP tool name"),
            ToolArgument(name="arguments", description="the tool's input as a JSON object"),
        ],
        default_threshold=0.6,
        choice_argument="tool",
        json_argument="arguments",
    )

    def available(self, backends: Backends) -> bool:
        return backends.mcp is not None

    async def describe(self, backends: Backends, scope: ToolScope | None = None) -> ToolSpec | None:
        """The MCP tools the connected servers offer at this moment (those in the request's groups); None when
        none answers."""
        if backends.mcp is None:
            return None
        found = {
            name: t for name, t in (await backends.mcp.list_tools()).items() if scope is None or scope.admits(t.access)
        }
        if not found:
            return None
        listing = "; ".join(
            f"{name} ({t.description}) input {json_schema_summary(t.input_schema)}" for name, t in found.items()
        )
        return self.spec.model_copy(
            update={
                "description": f"{self.spec.description} Tools: {listing}",
                "choices": {name: t.input_schema for name, t in found.items()},
            }
        )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        if backends.mcp is None:
            return _refused("no MCP servers are configured", request.retry_count)
        try:
            arguments = json.loads(request.step.arguments.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            return _refused(f"arguments are not JSON: {exc}", request.retry_count)
        name = request.step.arguments.get("tool", "")
        info = (await backends.mcp.list_tools()).get(name)
        if info is None:  # unknown now: whether it changes things cannot be told, so it is not called
            return _refused(f"no connected MCP server offers the tool {name!r} now", request.retry_count)
        if not info.read_only and not request.approved:
            why = approval_reason(info)
            return StepOutput(
                success=False,
                output=f"{name} was not called: {why}",
                needs_approval=why,
                deterministic=True,
                confidence=ConfidenceMetrics(
                    score=0.0, reasoning=f"not called: {why}", retry_count=request.retry_count
                ),
            )
        result = await backends.mcp.call(
            request.step.arguments.get("tool", ""), arguments, timeout_s=request.step.timeout_ms / 1000
        )
        return StepOutput(
            success=not result.is_error,
            output=result.text,
            error=result.text if result.is_error else None,
            confidence=score_call(
                result.is_error, result.text, result.structured, result.output_schema, request.retry_count
            ),
        )
