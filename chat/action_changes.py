"""What an action plan will change in each target, from the ontology's definition of the action: the properties
it sets (to a fixed value or to one of the plan's parameters) and the account it debits. The approval card shows
them beside the targets, so an approver reads what will be written before anything is. Pure functions."""

from __future__ import annotations

from typing import Any

from actions.ontology import Ontology, UnknownName


def planned_changes(plan: dict[str, Any], ontology: Ontology) -> dict[str, Any]:
    """`{"changes": [...], "irreversible", "inverse", "description"}` for an `action_plan` event's plan; {} when
    the ontology does not define its action. Each change is `{"property", "value"}` (with `"parameter"` when the
    value is the plan's), or `{"debit", "account"}`: the account is debited by the target's `debit` property."""
    try:
        definition = ontology.require_action(str(plan.get("entity_type", "")), str(plan.get("action_name", "")))
    except UnknownName:
        return {}
    parameters = plan.get("parameters") or {}
    changes: list[dict[str, Any]] = []
    for effect in definition.effects:
        if effect.debit:
            account = definition.account
            changes.append(
                {"debit": effect.debit, "account": f"{account.class_} {account.id}" if account is not None else ""}
            )
        elif effect.param:
            changes.append({"property": effect.set, "value": parameters.get(effect.param), "parameter": effect.param})
        else:
            changes.append({"property": effect.set, "value": effect.value})
    return {
        "changes": changes,
        "irreversible": definition.cannot_be_undone,
        "inverse": definition.inverse or "",
        "description": definition.description,
    }
