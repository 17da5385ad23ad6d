"""validate_action_preconditions: would an action apply to one entity right now, and if not, why not
(a dry run: one read-only query, nothing changes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from actions.ontology import UnknownName
from actions.queries import validation_query
from backends.graph_store import GraphQueryError
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolSpec
from tools.action_tool import ActionLookupTool, action_output

if TYPE_CHECKING:
    from backends import Backends


class ValidateActionPreconditions(ActionLookupTool):
    spec = ToolSpec(
        name="validate_action_preconditions",
        description="Check, without changing anything, whether an action's preconditions hold for one entity "
        "now, and which fail.",
        arguments=[
            ToolArgument(name="entity_type", description="the class of the entity"),
            ToolArgument(name="action_name", description="the action"),
            ToolArgument(name="entity_id", description="the entity's id"),
        ],
        cacheable=False,  # the answer changes as soon as an action runs
    )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        assert backends.graph is not None and backends.ontology is not None
        args = request.step.arguments
        entity_type, action_name, entity_id = (
            args.get("entity_type", ""),
            args.get("action_name", ""),
            args.get("entity_id", ""),
        )
        try:
            query, params = validation_query(backends.ontology, entity_type, action_name, entity_id)
            rows = await backends.graph.ro_query(query, params)
        except (UnknownName, GraphQueryError) as exc:
            return action_output({"error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        if not rows.rows:
            reason = f"no {entity_type} {entity_id!r}"
            return action_output(
                {"entity_id": entity_id, "valid": False, "failures": [reason]}, True, 0.9, reason, request.retry_count
            )
        _, failures = rows.rows[0]
        verdict = "preconditions hold" if not failures else "; ".join(failures)
        return action_output(
            {"entity_id": entity_id, "valid": not failures, "failures": failures},
            True,
            0.9,
            verdict,
            request.retry_count,
        )
