"""The action tools of seed 002 (section 3.2) except the batch, which is the workflow's fan-out:
list_available_actions, get_action_details, validate_action_preconditions, execute_action.

An execution is one atomic query (confidence_core/action_query.py) carrying an idempotency key of the
run, the step and the entity: a retried or replayed activity finds its key and applies nothing twice.
Each result says what changed (before/after) or which preconditions failed, in plain words.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from temporalio import activity

from activities.graph_store import GraphQueryError, GraphStore
from confidence_core.action_query import RECORD_LABEL, execution_query, validation_query
from confidence_core.activity_io import StepInput, StepOutput
from confidence_core.models import ConfidenceMetrics
from confidence_core.ontology import Ontology, UnknownName


def _output(payload: dict[str, Any], success: bool, score: float, reasoning: str, retry: int) -> StepOutput:
    return StepOutput(success=success, output=json.dumps(payload, default=str), error=None if success else reasoning,
                      confidence=ConfidenceMetrics(score=score, reasoning=reasoning, retry_count=retry))


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: {"before": before.get(k), "after": after.get(k)}
            for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}


class ActionTools:
    def __init__(self, graph: GraphStore, ontology: Ontology) -> None:
        self.graph = graph
        self.ontology = ontology

    def all(self) -> list[Any]:
        return [self.list_available_actions, self.get_action_details, self.validate_action_preconditions,
                self.execute_action]

    def _definition(self, entity_type: str, action_name: str) -> dict[str, Any]:
        action = self.ontology.require_action(entity_type, action_name)
        return {"entity_type": entity_type, "action": action_name, "description": action.description,
                "parameters": action.parameters, "preconditions": [p.message for p in action.preconditions],
                "effects": [e.model_dump(exclude_defaults=True) for e in action.effects],
                "inverse": action.inverse, "irreversible": action.irreversible}

    @activity.defn(name="list_available_actions")
    async def list_available_actions(self, request: StepInput) -> StepOutput:
        entity_type = request.step.arguments.get("entity_type", "")
        try:
            self.ontology.require_class(entity_type)
        except UnknownName as exc:
            return _output({"error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        actions = [self._definition(entity_type, name) for name in self.ontology.actions.get(entity_type, {})]
        return _output({"actions": actions}, True, 0.9 if actions else 0.5,
                       f"{len(actions)} action(s) defined for {entity_type}", request.retry_count)

    @activity.defn(name="get_action_details")
    async def get_action_details(self, request: StepInput) -> StepOutput:
        args = request.step.arguments
        try:
            details = self._definition(args.get("entity_type", ""), args.get("action_name", ""))
        except UnknownName as exc:
            return _output({"error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        return _output(details, True, 0.9, "action definition found", request.retry_count)

    @activity.defn(name="validate_action_preconditions")
    async def validate_action_preconditions(self, request: StepInput) -> StepOutput:
        """The dry run: would the action apply to this entity now, and if not, why not."""
        args = request.step.arguments
        entity_type, action_name, entity_id = (args.get("entity_type", ""), args.get("action_name", ""),
                                               args.get("entity_id", ""))
        try:
            query, params = validation_query(self.ontology, entity_type, action_name, entity_id)
            rows = await self.graph.ro_query(query, params)
        except (UnknownName, GraphQueryError) as exc:
            return _output({"error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        if not rows.rows:
            reason = f"no {entity_type} {entity_id!r}"
            return _output({"entity_id": entity_id, "valid": False, "failures": [reason]}, True, 0.9, reason,
                           request.retry_count)
        _, failures = rows.rows[0]
        verdict = "preconditions hold" if not failures else "; ".join(failures)
        return _output({"entity_id": entity_id, "valid": not failures, "failures": failures}, True, 0.9, verdict,
                       request.retry_count)

    @activity.defn(name="execute_action")
    async def execute_action(self, request: StepInput) -> StepOutput:
        args = request.step.arguments
        entity_type, action_name, entity_id = (args.get("entity_type", ""), args.get("action_name", ""),
                                               args.get("entity_id", ""))
        key = f"{request.run_id}:{request.step.id}:{entity_type}:{entity_id}:{action_name}"
        record = {"action": action_name, "entity_type": entity_type, "entity_id": entity_id,
                  "run_id": request.run_id, "step_id": request.step.id,
                  "at": datetime.now(UTC).isoformat().replace("+00:00", "Z")}
        try:
            query, params = execution_query(self.ontology, entity_type, action_name, entity_id, key, record)
            rows = await self.graph.write_query(query, params)
        except (UnknownName, GraphQueryError) as exc:
            return _output({"entity_id": entity_id, "error": str(exc)}, False, 0.0, str(exc), request.retry_count)
        if not rows.rows:
            reason = f"no {entity_type} {entity_id!r}"
            return _output({"entity_id": entity_id, "error": reason}, False, 0.9, reason, request.retry_count)
        before, after, failures, already = rows.rows[0]
        if failures and not already:
            return _output({"entity_id": entity_id, "error": "; ".join(failures), "failures": failures}, False,
                           0.9, "; ".join(failures), request.retry_count)
        changes = _changes(before, after)
        if already:  # applied by an earlier attempt of this very step: report what that attempt changed
            stored = await self.graph.ro_query(f"MATCH (r:`{RECORD_LABEL}` {{key: $key}}) RETURN r.changes",
                                               {"key": key})
            changes = json.loads(stored.rows[0][0] or "{}") if stored.rows else {}
        else:
            await self.graph.write_query(f"MATCH (r:`{RECORD_LABEL}` {{key: $key}}) SET r.changes = $changes",
                                         {"key": key, "changes": json.dumps(changes, default=str)})
        return _output({"entity_id": entity_id, "changes": changes, "already_applied": already}, True, 0.95,
                       f"{action_name} applied to {entity_type} {entity_id}", request.retry_count)
