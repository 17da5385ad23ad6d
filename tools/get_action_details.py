"""get_action_details: one action's full definition (parameters, preconditions, effects, inverse)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from actions.ontology import UnknownName
from actions.queries import describe_action
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolSpec
from tools.action_tool import ActionLookupTool, action_output

if TYPE_CHECKING:
    from backends import Backends


class GetActionDetails(ActionLookupTool):
    spec = ToolSpec(
        name="get_action_details",
        description="One action's definition: parameters, preconditions, effects, its inverse and whether it "
        "is irreversible. Reads definitions only; changes nothing.",
        arguments=[
            ToolArgument(name="entity_type", description="the class of entities"),
            ToolArgument(name="action_name", description="the action"),
        ],
    )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        assert backends.ontology is not None
        args = request.step.arguments
        try:
            details = describe_action(backends.ontology, args.get("entity_type", ""), args.get("action_name", ""))
        except UnknownName as exc:
            return action_output({"error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        return action_output(details, True, 0.9, "action definition found", request.retry_count)
