"""Cypher for an ACTION definition: the precondition checks, and the atomic execution that applies the
effects and records the idempotency key in the same query (no check-then-act race, never twice).

Only names the ontology declares reach the query text; entity ids, values, the action's parameters,
messages and keys are query parameters.
"""

from __future__ import annotations

import json
from typing import Any

from actions.ontology import ActionDefinition, Ontology, Precondition, UnknownName

OPS = {"eq": "=", "ne": "<>", "in": "IN", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
RECORD_LABEL = "ActionRecord"  # bookkeeping nodes, in the instance graph so the write stays one query


def comparison(prop: str, op: str, param: str, var: str = "e") -> str:
    """`e.prop OP $param` where a missing property fails eq/in/lt/... and passes ne (an order without
    `paid` is not paid): preconditions and target filters read a missing value alike."""
    return f"coalesce({var}.`{prop}` {OPS[op]} ${param}, {'true' if op == 'ne' else 'false'})"


# A key more than one node holds: applying the action would change every one of them under one record.
SHARED_KEY = "its key is held by more than one node, so changing it would change them all: nothing was changed"


def _checks(action: ActionDefinition, params: dict[str, Any], expected: dict[str, Any] | None = None) -> str:
    """A Cypher list of the failed checks' messages: the entity's key held by one node only (`copies`, from
    `_head`), the preconditions (a missing property: see `comparison`), and `expected` current values."""
    params["shared_key"] = SHARED_KEY
    cases = ["CASE WHEN copies > 1 THEN $shared_key END"]
    cases += [
        f"CASE WHEN NOT {_condition(pre, i, params)} THEN $m{i} END" for i, pre in enumerate(action.preconditions)
    ]
    for i, (prop, value) in enumerate(sorted((expected or {}).items())):
        params[f"x{i}"], params[f"xm{i}"] = value, f"{prop} is no longer {value!r}, the value it is expected to hold"
        same = f"e.`{prop}` IS NULL" if value is None else f"coalesce(e.`{prop}` = $x{i}, false)"
        cases.append(f"CASE WHEN NOT {same} THEN $xm{i} END")
    return f"[m IN [{', '.join(cases)}] WHERE m IS NOT NULL]"


def _condition(
    pre: Precondition, i: int, params: dict[str, Any], balance: str = "acct.`balance`", amount: str = ""
) -> str:
    """Precondition i as a Cypher condition on `e` (a funds check: `balance` covers `amount`, by default the
    entity's amount property); its message (and value) become parameters."""
    params[f"m{i}"] = pre.message
    if pre.funds:
        return f"coalesce({balance} >= {amount or f'e.`{pre.funds}`'}, false)"
    params[f"v{i}"] = pre.value
    return comparison(pre.property, pre.op, f"v{i}")


def _head(
    ontology: Ontology,
    class_name: str,
    action: ActionDefinition,
    params: dict[str, Any],
    entity_id: str = "$entity_id",
    carry: str = "",
) -> str:
    """Matches the entity `e` and the action's account `acct` (null without one); `carry`: variables kept."""
    key = ontology.classes[class_name].key
    # `copies`: how many nodes hold the entity's key (more than one: every check fails, see SHARED_KEY)
    head = (
        f"MATCH (e:`{class_name}`) WHERE e.`{key}` = {entity_id} "
        f"WITH {carry}collect(e) AS same UNWIND same AS e WITH {carry}e, size(same) AS copies"
    )
    if action.account:
        account_key = ontology.classes[action.account.class_].key
        params["account_id"] = action.account.id
        head += f" OPTIONAL MATCH (acct:`{action.account.class_}` {{`{account_key}`: $account_id}})"
    else:
        head += f" WITH {carry}e, copies, null AS acct"
    return head


def validation_query(
    ontology: Ontology, class_name: str, action_name: str, entity_id: str
) -> tuple[str, dict[str, Any]]:
    action = ontology.require_action(class_name, action_name)
    params: dict[str, Any] = {"entity_id": entity_id}
    head = _head(ontology, class_name, action, params)
    return f"{head} RETURN properties(e), {_checks(action, params)}", params


def batch_validation_query(
    ontology: Ontology, class_name: str, action_name: str, entity_ids: list[str]
) -> tuple[str, dict[str, Any]]:
    """The dry run over many entities at once: one row (properties, failed checks) per entity found."""
    action = ontology.require_action(class_name, action_name)
    params: dict[str, Any] = {"entity_ids": entity_ids}
    head = _head(ontology, class_name, action, params, entity_id="entity_id", carry="entity_id, ")
    return f"UNWIND $entity_ids AS entity_id {head} RETURN properties(e), {_checks(action, params)}", params


def execution_query(
    ontology: Ontology,
    class_name: str,
    action_name: str,
    entity_id: str,
    key: str,
    record: dict[str, Any],
    parameters: dict[str, Any] | None = None,
    expected: dict[str, Any] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Returns (before, after, failures, already_applied, and when already applied the recorded change
    as keys, before values, after values) for the entity; applies nothing when any precondition fails
    or the key was used before. `parameters` are the action's declared parameters' values, already
    checked against their types (actions/values.py); they are kept in the record.
    `expected`: property values the entity must still hold, or nothing is applied (an undo: the values the
    undone action left, so a later change is never silently overwritten)."""
    action = ontology.require_action(class_name, action_name)
    parameters = _declared(action_name, action, parameters)
    params: dict[str, Any] = {"entity_id": entity_id, "key": key, "record": {**_record(record, parameters), "key": key}}
    head = _head(ontology, class_name, action, params)
    query = (
        f"{head} OPTIONAL MATCH (done:`{RECORD_LABEL}` {{key: $key}}) "
        f"WITH e, acct, done, properties(e) AS before, {_checks(action, params, expected)} AS failures "
        f"{_apply(action, parameters, params, '$record')} "
        f"RETURN {_RETURNED}"
    )
    return query, params


def group_execution_query(
    ontology: Ontology,
    class_name: str,
    action_name: str,
    items: list[dict[str, Any]],
    parameters: dict[str, Any] | None = None,
) -> tuple[str, dict[str, Any]]:
    """`execution_query` for many entities of one action with the same parameters in ONE write query (the
    graph's single writer pays its fixed cost once). `items` are {entity_id, key, record}, the entity ids
    distinct (two rows of one entity would both read it as it was before the query). Returns one row per
    item whose entity exists: the item's index in `items`, then `execution_query`'s columns; an item
    without a row names no entity. Each item is checked and applied as if the items ran one after another
    in their order: its own key (an item whose key has a record applies nothing), its own preconditions,
    its record written with its effects.

    FalkorDB evaluates every row's checks before any row writes, so for an action with an account (funds
    checks, debits) each row would see the balance as it was before the group: its funds checks follow a
    running balance instead, the balance less what the items before it in the group debited (a fold over
    the rows in the items' order; an item that fails or was applied before takes nothing), so the group
    ends as its items executed one at a time in order would. The debits themselves are applied row by row
    (FalkorDB reads `acct.balance` as each row writes it: two items debiting one account take both)."""
    action = ontology.require_action(class_name, action_name)
    parameters = _declared(action_name, action, parameters)
    params: dict[str, Any] = {
        "items": [
            {
                "i": i,
                "entity_id": item["entity_id"],
                "record": {**_record(item["record"], parameters), "key": item["key"]},
                "key": item["key"],
            }
            for i, item in enumerate(items)
        ]
    }
    head = _head(ontology, class_name, action, params, entity_id="item.entity_id", carry="item, ")
    rows = f"UNWIND $items AS item {head} OPTIONAL MATCH (done:`{RECORD_LABEL}` {{key: item.key}}) "
    if action.account is None:
        checked = f"WITH item, e, acct, done, properties(e) AS before, {_checks(action, params)} AS failures"
    else:
        checked = _running_checks(action, params)
    return f"{rows}{checked} {_apply(action, parameters, params, 'item.record')} RETURN item.i, {_RETURNED}", params


def _running_checks(action: ActionDefinition, params: dict[str, Any]) -> str:
    """The rows' failed preconditions with funds checked against a running balance: each row's other checks
    and amounts are read first, then a fold in the items' order carries [balance, failures so far], taking
    a row's debits off the balance when it applies (no record for its key and nothing failed)."""
    pre = [
        f"e.`{p.funds}`" if p.funds else f"CASE WHEN NOT {_condition(p, i, params)} THEN $m{i} END"
        for i, p in enumerate(action.preconditions)
    ]
    debits = " + ".join(f"e.`{e.debit}`" for e in action.effects if e.debit) or "0"
    params["shared_key"] = SHARED_KEY
    pre = ["CASE WHEN copies > 1 THEN $shared_key END", *pre]  # row.pre[0]: the key held by one node only
    cases = [
        "row.pre[0]",
        *(
            f"CASE WHEN NOT {_condition(p, i, params, balance='s[0]', amount=f'row.pre[{i + 1}]')} THEN $m{i} END"
            if p.funds
            else f"row.pre[{i + 1}]"
            for i, p in enumerate(action.preconditions)
        ),
    ]
    failures = f"[m IN [{', '.join(cases)}] WHERE m IS NOT NULL]"
    fold = (
        f"reduce(s = [acct.`balance`, []], row IN rows | "
        f"[CASE WHEN row.done IS NULL AND size({failures}) = 0 THEN s[0] - row.debit ELSE s[0] END, "
        f"s[1] + [{failures}]])[1]"
    )
    return (
        f"WITH item, e, acct, done, properties(e) AS before, [{', '.join(pre)}] AS pre, {debits} AS debit "
        f"ORDER BY item.i "
        f"WITH acct, collect({{item: item, e: e, done: done, before: before, pre: pre, debit: debit}}) AS rows "
        f"WITH acct, rows, {fold} AS checked UNWIND range(0, size(rows) - 1) AS j "
        f"WITH rows[j].item AS item, rows[j].e AS e, acct, rows[j].done AS done, rows[j].before AS before, "
        f"checked[j] AS failures"
    )


def _declared(action_name: str, action: ActionDefinition, parameters: dict[str, Any] | None) -> dict[str, Any]:
    parameters = parameters or {}
    undeclared = [p for p in parameters if p not in action.parameters]
    missing = [p for p in action.parameters if p not in parameters]
    if undeclared or missing:
        raise UnknownName(f"{action_name}: parameters not declared {undeclared}, missing {missing}")
    return parameters


def _record(record: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    if parameters:  # record property values cannot be maps: the parameters travel as JSON text
        return {**record, "parameters": json.dumps(parameters, default=str)}
    return record


_RETURNED = (
    "before, properties(e), failures, done IS NOT NULL, done.changed_keys, done.changed_before, "
    "done.changed_after, done.changed_before_keys, done.changed_after_keys"
)


def _apply(action: ActionDefinition, parameters: dict[str, Any], params: dict[str, Any], record: str) -> str:
    """The effects and the record (`record`: its properties), for a row whose key has no record (`done`)
    and no failed precondition."""
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
    return (
        f"FOREACH (_ IN CASE WHEN done IS NULL AND size(failures) = 0 THEN [1] ELSE [] END | "
        f"SET {', '.join(sets)} CREATE (r:`{RECORD_LABEL}`) SET r = {record}, r.changed_keys = $changed_keys, "
        f"{_recorded('before', changed)}, {_recorded('e', changed, 'after')})"
    )


def _recorded(var: str, changed: list[str], side: str = "before") -> str:
    present = ", ".join(
        f"CASE WHEN {var}.`{p}` IS NULL THEN null ELSE $changed_keys[{i}] END" for i, p in enumerate(changed)
    )
    values = ", ".join(f"{var}.`{p}`" for p in changed)
    return (
        f"r.changed_{side} = [v IN [{values}] WHERE v IS NOT NULL], "
        f"r.changed_{side}_keys = [k IN [{present}] WHERE k IS NOT NULL]"
    )


def recorded_values(keys: list[str] | None, values: list[Any] | None, present: list[str] | None) -> dict[str, Any]:
    """One side of a record's change by property name. Records written before `changed_*_keys` existed
    align their values with `keys`."""
    return dict(zip(keys if present is None else present, values or [], strict=False)) if keys else {}


def recorded_changes(
    keys: list[str] | None, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """A record's change as {property: {before, after}}, leaving out properties the action left as they were."""
    return {k: {"before": before.get(k), "after": after.get(k)} for k in keys or [] if before.get(k) != after.get(k)}


def describe_action(ontology: Ontology, entity_type: str, action_name: str) -> dict[str, Any]:
    """An action's definition in plain data (UnknownName when there is no such action)."""
    action = ontology.require_action(entity_type, action_name)
    return {
        "entity_type": entity_type,
        "action": action_name,
        "description": action.description,
        "parameters": action.parameters,
        "preconditions": [p.message for p in action.preconditions],
        "effects": [e.model_dump(exclude_defaults=True) for e in action.effects],
        "inverse": action.inverse,
        "irreversible": action.irreversible,
    }
