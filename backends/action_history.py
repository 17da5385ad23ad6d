"""The action history, read and undone by the chat API and `tg-confidence actions`: every executed action is an
ActionRecord node, written in the same query as its effects (request, entity, before/after, time, run). Listing
reads them; undo applies the definition's inverse once per record, under its own idempotency key, and marks the
record undone. An inverse with parameters gets them from the record: each one is the value the undone action
found in the property the inverse sets from it (rescheduling back to the date it had), so undo restores what was
there."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from actions.ontology import ActionDefinition, Ontology
from actions.queries import RECORD_LABEL, recorded_changes, recorded_values
from backends.graph_store import GraphStore
from contracts.query_path import StepOutput

FIELDS = (
    "key",
    "at",
    "run_id",
    "action",
    "entity_type",
    "entity_id",
    "request",
    "undoes",
    "undone_by",
    "changed_keys",
    "changed_before",
    "changed_after",
    "changed_before_keys",
    "changed_after_keys",
    "parameters",
)


class HistoryEntry(BaseModel):
    key: str
    at: str = ""
    run_id: str = ""
    action: str
    entity_type: str
    entity_id: str
    request: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)  # the values the action was given
    changes: dict[str, Any] = Field(default_factory=dict)
    undoes: str | None = None
    undone_by: str | None = None
    can_undo: bool = False  # not an undo itself, not undone yet, and its action declares an inverse
    # Every property the action set, with the value it had before (changes leaves out unchanged ones).
    before: dict[str, Any] = Field(default_factory=dict, exclude=True)


class UndoOutcome(BaseModel):
    key: str
    entity_id: str
    success: bool
    detail: str


class ActionApplier(Protocol):
    """What undo needs of the action path's executor (`activities/actions.py: ActionTools`), passed in because
    it sits in a layer above: an inverse is applied exactly as a run applies an action, under its key, in one
    query."""

    graph: GraphStore
    ontology: Ontology

    async def apply(
        self,
        entity_type: str,
        action_name: str,
        entity_id: str,
        key: str,
        record: dict[str, Any],
        retry: int = 0,
        parameters: dict[str, Any] | None = None,
        expected: dict[str, Any] | None = None,
    ) -> StepOutput: ...


class ActionHistory:
    def __init__(self, tools: ActionApplier) -> None:
        self.tools = tools
        self.graph = tools.graph

    async def list(self, run_id: str = "", entity_id: str = "", key: str = "", limit: int = 50) -> list[HistoryEntry]:
        conditions = [
            f"r.{name} = ${name}"
            for name, value in (("run_id", run_id), ("entity_id", entity_id), ("key", key))
            if value
        ]
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        rows = await self.graph.ro_query(
            f"MATCH (r:`{RECORD_LABEL}`) {where}RETURN {', '.join(f'r.{f}' for f in FIELDS)} "
            "ORDER BY r.at DESC, r.key LIMIT $limit",
            {"run_id": run_id, "entity_id": entity_id, "key": key, "limit": limit},
            max_rows=limit,
        )
        entries = []
        for row in rows.rows:
            values = dict(zip(FIELDS, row, strict=True))
            keys = values.pop("changed_keys")
            before = recorded_values(keys, values.pop("changed_before"), values.pop("changed_before_keys"))
            after = recorded_values(keys, values.pop("changed_after"), values.pop("changed_after_keys"))
            values["changes"] = recorded_changes(keys, before, after)
            values["before"] = {k: before.get(k) for k in keys or []}
            values["parameters"] = json.loads(values.pop("parameters") or "{}")
            definition = self.tools.ontology.actions.get(values["entity_type"], {}).get(values["action"])
            values["can_undo"] = (
                definition is not None
                and not definition.cannot_be_undone
                and not values["undoes"]
                and not values["undone_by"]
            )
            entries.append(HistoryEntry.model_validate({k: v for k, v in values.items() if v is not None}))
        return entries

    async def undo(self, entry: HistoryEntry, by: str) -> UndoOutcome:
        """Apply the inverse of one executed action. Never twice: the undo has its own key."""
        if entry.undoes:
            return UndoOutcome(
                key=entry.key, entity_id=entry.entity_id, success=False, detail="this record is itself an undo"
            )
        action = self.tools.ontology.require_action(entry.entity_type, entry.action)
        if not action.inverse:
            why = "it is irreversible" if action.irreversible else "its definition declares no inverse"
            return UndoOutcome(
                key=entry.key,
                entity_id=entry.entity_id,
                success=False,
                detail=f"{entry.action} cannot be undone: {why}",
            )
        parameters, missing = inverse_parameters(
            self.tools.ontology.require_action(entry.entity_type, action.inverse), entry.before
        )
        if missing:
            return UndoOutcome(
                key=entry.key,
                entity_id=entry.entity_id,
                success=False,
                detail=f"{action.inverse} cannot be applied: the record holds no earlier value "
                f"for its parameters {', '.join(missing)}",
            )
        undo_key = f"undo:{entry.key}"
        record = {
            "action": action.inverse,
            "entity_type": entry.entity_type,
            "entity_id": entry.entity_id,
            "run_id": entry.run_id,
            "step_id": "undo",
            "request": f"undo {entry.key} by {by}",
            "undoes": entry.key,
            "at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        # Only while the entity still holds what the action left: undoing run A after run B changed the same
        # property would restore A's "before" over B's change and lose it without a word.
        left = {prop: change["after"] for prop, change in entry.changes.items()}
        out = await self.tools.apply(
            entry.entity_type, action.inverse, entry.entity_id, undo_key, record, parameters=parameters, expected=left
        )
        if not out.success:
            later = " (changed after this action: undo that change first)" if "no longer" in (out.error or "") else ""
            return UndoOutcome(
                key=entry.key,
                entity_id=entry.entity_id,
                success=False,
                detail=f"{action.inverse} not applied: {out.error}{later}",
            )
        await self.graph.write_query(
            f"MATCH (r:`{RECORD_LABEL}` {{key: $key}}) SET r.undone_by = $undo_key, r.undone_at = $at",
            {"key": entry.key, "undo_key": undo_key, "at": record["at"]},
        )
        return UndoOutcome(
            key=entry.key,
            entity_id=entry.entity_id,
            success=True,
            detail=f"{action.inverse} applied: {json.loads(out.output)['changes']}",
        )


def inverse_parameters(inverse: ActionDefinition, before: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The inverse's parameters from the undone action's before values: each is the earlier value of the
    property the inverse sets from it (None when it had none: setting None removes the property again).
    Also the parameters no recorded property gives."""
    values: dict[str, Any] = {}
    for name in inverse.parameters:
        props = [e.set for e in inverse.effects if e.param == name and e.set in before]
        if props:
            values[name] = before[props[0]]
    return values, [n for n in inverse.parameters if n not in values]
