"""list_available_actions: the actions defined for one class of entities, with their preconditions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from actions.ontology import UnknownName
from actions.queries import describe_action
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolSpec
from tools.action_tool import ActionLookupTool, action_output

if TYPE_CHECKING:
    from backends import Backends


class ListAvailableActions(ActionLookupTool):
    spec = ToolSpec(
        name="list_available_actions",
        description="The actions that can be taken on entities of one class: names, parameters, preconditions "
        "and effects. Reads definitions only; changes nothing.",
        arguments=[ToolArgument(name="entity_type", description="the class of entities")],
    )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        assert backends.ontology is not None
        entity_type = request.step.arguments.get("entity_type", "")
        try:
            backends.ontology.require_class(entity_type)
        except UnknownName as exc:
            return action_output({"error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        actions = [
            describe_action(backends.ontology, entity_type, name)
            for name in backends.ontology.actions.get(entity_type, {})
        ]
        return action_output(
            {"actions": actions},
            True,
            0.9 if actions else 0.5,
            f"{len(actions)} action(s) defined for {entity_type}",
            request.retry_count,
        )
