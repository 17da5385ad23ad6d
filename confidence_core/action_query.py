"""Cypher for an ACTION definition: the precondition checks, and the atomic execution that applies the
effects and records the idempotency key in the same query (no check-then-act race, never twice).

Only names the ontology declares reach the query text; entity ids, values, the action's parameters,
messages and keys are query parameters.
"""

from __future__ import annotations

import json
from typing import Any

from confidence_core.ontology import ActionDefinition, Ontology, UnknownName

OPS = {"eq": "=", "ne": "<>", "in": "IN", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
RECORD_LABEL = "ActionRecord"  # bookkeeping nodes, in the instance graph so the write stays one query


def comparison(prop: str, op: str, param: str) -> str:
    """`e.prop OP $param` where a missing property fails eq/in/lt/... and passes ne (an order without
    `paid` is not paid): preconditions and target filters read a missing value alike."""
    return f"coalesce(e.`{prop}` {OPS[op]} ${param}, {'true' if op == 'ne' else 'false'})"


def _checks(action: ActionDefinition, params: dict[str, Any]) -> str:
    """A Cypher list of the failed preconditions' messages (a missing property: see `comparison`)."""
    cases = []
    for i, pre in enumerate(action.preconditions):
        params[f"m{i}"] = pre.message
        if pre.funds:
            condition = f"coalesce(acct.`balance` >= e.`{pre.funds}`, false)"
        else:
            params[f"v{i}"] = pre.value
            condition = comparison(pre.property, pre.op, f"v{i}")
        cases.append(f"CASE WHEN NOT {condition} THEN $m{i} END")
    return f"[m IN [{', '.join(cases)}] WHERE m IS NOT NULL]" if cases else "[]"


def _head(ontology: Ontology, class_name: str, action: ActionDefinition, params: dict[str, Any],
          entity_id: str = "$entity_id") -> str:
    key = ontology.classes[class_name].key
    head = f"MATCH (e:`{class_name}`) WHERE e.`{key}` = {entity_id}"
    if action.account:
        account_key = ontology.classes[action.account.class_].key
        params["account_id"] = action.account.id
        head += f" OPTIONAL MATCH (acct:`{action.account.class_}` {{`{account_key}`: $account_id}})"
    else:
        head += " WITH e, null AS acct"
    return head


def validation_query(ontology: Ontology, class_name: str, action_name: str, entity_id: str) -> tuple[str, dict]:
    action = ontology.require_action(class_name, action_name)
    params: dict[str, Any] = {"entity_id": entity_id}
    head = _head(ontology, class_name, action, params)
    return f"{head} RETURN properties(e), {_checks(action, params)}", params


def batch_validation_query(ontology: Ontology, class_name: str, action_name: str,
                           entity_ids: list[str]) -> tuple[str, dict]:
    """The dry run over many entities at once: one row (properties, failed checks) per entity found."""
    action = ontology.require_action(class_name, action_name)
    params: dict[str, Any] = {"entity_ids": entity_ids}
    head = _head(ontology, class_name, action, params, entity_id="entity_id")
    return f"UNWIND $entity_ids AS entity_id {head} RETURN properties(e), {_checks(action, params)}", params


def execution_query(ontology: Ontology, class_name: str, action_name: str, entity_id: str, key: str,
                    record: dict[str, Any], parameters: dict[str, Any] | None = None) -> tuple[str, dict]:
    """Returns (before, after, failures, already_applied, and when already applied the recorded change
    as keys, before values, after values) for the entity; applies nothing when any precondition fails
    or the key was used before. `parameters` are the action's declared parameters' values, already
    checked against their types (confidence_core/action_values.py); they are kept in the record."""
    action = ontology.require_action(class_name, action_name)
    parameters = parameters or {}
    undeclared = [p for p in parameters if p not in action.parameters]
    missing = [p for p in action.parameters if p not in parameters]
    if undeclared or missing:
        raise UnknownName(f"{action_name}: parameters not declared {undeclared}, missing {missing}")
    if parameters:  # record property values cannot be maps: the parameters travel as JSON text
        record = {**record, "parameters": json.dumps(parameters, default=str)}
    params: dict[str, Any] = {"entity_id": entity_id, "key": key, "record": {**record, "key": key}}
    head = _head(ontology, class_name, action, params)
    sets = []
    changed = [e.set for e in action.effects if e.set]
    for i, effect in enumerate(action.effects):
        if effect.set:
            params[f"e{i}"] = parameters[effect.param] if effect.param else effect.value
            sets.append(f"e.`{effect.set}` = $e{i}")
        else:
            sets.append(f"acct.`balance` = acct.`balance` - e.`{effect.debit}`")
    params["changed_keys"] = changed
    # The record carries the change itself, written with the effects, so a record never exists without
    # what it changed. Property values cannot be maps, nor arrays holding null: each side is the values
    # that exist and the names they belong to (a property absent before a parameter set it is left out).
    query = (
        f"{head} OPTIONAL MATCH (done:`{RECORD_LABEL}` {{key: $key}}) "
        f"WITH e, acct, done, properties(e) AS before, {_checks(action, params)} AS failures "
        f"FOREACH (_ IN CASE WHEN done IS NULL AND size(failures) = 0 THEN [1] ELSE [] END | "
        f"SET {', '.join(sets)} CREATE (r:`{RECORD_LABEL}`) SET r = $record, r.changed_keys = $changed_keys, "
        f"{_recorded('before', changed)}, {_recorded('e', changed, 'after')}) "
        f"RETURN before, properties(e), failures, done IS NOT NULL, "
        f"done.changed_keys, done.changed_before, done.changed_after, "
        f"done.changed_before_keys, done.changed_after_keys"
    )
    return query, params


def _recorded(var: str, changed: list[str], side: str = "before") -> str:
    present = ", ".join(f"CASE WHEN {var}.`{p}` IS NULL THEN null ELSE $changed_keys[{i}] END"
                        for i, p in enumerate(changed))
    values = ", ".join(f"{var}.`{p}`" for p in changed)
    return (f"r.changed_{side} = [v IN [{values}] WHERE v IS NOT NULL], "
            f"r.changed_{side}_keys = [k IN [{present}] WHERE k IS NOT NULL]")


def recorded_values(keys: list[str] | None, values: list | None, present: list[str] | None) -> dict[str, Any]:
    """One side of a record's change by property name. Records written before `changed_*_keys` existed
    align their values with `keys`."""
    return dict(zip(keys if present is None else present, values or [], strict=False)) if keys else {}


def recorded_changes(keys: list[str] | None, before: dict[str, Any],
                     after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A record's change as {property: {before, after}}, leaving out properties the action left as they were."""
    return {k: {"before": before.get(k), "after": after.get(k)} for k in keys or []
            if before.get(k) != after.get(k)}


def describe_action(ontology: Ontology, entity_type: str, action_name: str) -> dict[str, Any]:
    """An action's definition in plain data (UnknownName when there is no such action)."""
    action = ontology.require_action(entity_type, action_name)
    return {"entity_type": entity_type, "action": action_name, "description": action.description,
            "parameters": action.parameters, "preconditions": [p.message for p in action.preconditions],
            "effects": [e.model_dump(exclude_defaults=True) for e in action.effects],
            "inverse": action.inverse, "irreversible": action.irreversible}
