"""The writes behind the execute_action(s) activities (activities/actions.py): an execution checked and keyed
before any write, then applied in one atomic query (actions/queries.py) that carries an idempotency key of the
run, the step and the entity, and the action's parameters: a retried or replayed activity finds its key and
applies nothing twice. A group of entities of one action and parameters is one query, FalkorDB's single writer
paying its fixed cost once. Each result says what changed (before/after) or which preconditions failed, in
plain words."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter

from actions.ontology import Ontology, UnknownName
from actions.queries import (
    RECORD_LABEL,
    execution_query,
    group_execution_query,
    recorded_changes,
    recorded_values,
)
from actions.values import check_parameters
from backends.graph_store import GraphQueryError, GraphStore
from contracts.query_path import StepInput, StepOutput
from tools.action_tool import action_output

EXECUTED = Counter(
    "tgca_actions",
    "Action executions that returned a result, by action and outcome (applied; "
    "repeated: an earlier attempt had applied it; failed)",
    ["action", "outcome"],
)
GROUP_QUERY_LIMIT = 1000  # entities per group execution query


@dataclass(frozen=True)
class Execution:
    """One entity's execution, checked and keyed (`prepare`)."""

    entity_type: str
    action_name: str
    entity_id: str
    key: str
    record: dict[str, Any]
    parameters: dict[str, Any]
    retry: int


def prepare(ontology: Ontology, request: StepInput) -> StepOutput | Execution:
    """An execution's key, checked parameters and record; or, for an unknown action or invalid parameters,
    its failed output (counted), before any write."""
    args = request.step.arguments
    entity_type, action_name, entity_id = (
        args.get("entity_type", ""),
        args.get("action_name", ""),
        args.get("entity_id", ""),
    )
    key = f"{request.workflow_id}:{request.step.id}:{entity_type}:{entity_id}:{action_name}"
    try:
        action = ontology.require_action(entity_type, action_name)
        given = json.loads(args.get("parameters") or "{}")
        parameters, problems = check_parameters(action_name, action, given if isinstance(given, dict) else {})
    except (UnknownName, json.JSONDecodeError) as exc:
        parameters, problems = {}, [str(exc)]
    if problems:  # checked when planned; a direct caller's bad values fail here, before any write
        reason = "; ".join(problems)
        EXECUTED.labels(action="(invalid request)", outcome="failed").inc()  # a caller's name: no label
        return action_output({"entity_id": entity_id, "error": reason}, False, 0.0, reason, request.retry_count)
    record = {
        "action": action_name,
        "entity_type": entity_type,
        "entity_id": entity_id,
        "run_id": request.workflow_id,
        "step_id": request.step.id,
        "request": request.question[:1000],
        "at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }
    return Execution(entity_type, action_name, entity_id, key, record, parameters, request.retry_count)


def count_outcome(action_name: str, out: StepOutput) -> None:
    repeated = out.success and bool(json.loads(out.output).get("already_applied"))
    EXECUTED.labels(
        action=action_name, outcome="repeated" if repeated else "applied" if out.success else "failed"
    ).inc()


class ActionWriter:
    def __init__(self, graph: GraphStore, ontology: Ontology) -> None:
        self.graph = graph
        self.ontology = ontology
        self._record_index: asyncio.Task[None] | None = None

    async def record_index_ready(self) -> None:
        if self._record_index is None:
            self._record_index = asyncio.ensure_future(self._ensure_record_index())
        try:
            await asyncio.shield(self._record_index)
        except GraphQueryError:
            self._record_index = None  # the graph was unreachable: try again with the next execution

    async def _ensure_record_index(self) -> None:
        """Every execution looks its idempotency key up: without an index that is a scan of every record
        (measured: a 10,000-entity batch 3.7x its ideal instead of 2x). Created once per graph."""
        try:
            await self.graph.write_query(f"CREATE INDEX FOR (r:`{RECORD_LABEL}`) ON (r.key)", {})
        except GraphQueryError as exc:
            if "already indexed" not in str(exc):
                raise

    async def apply_combo(self, items: list[tuple[int, Execution]]) -> list[tuple[int, StepOutput]]:
        """Entities of one entity type, action and parameters, GROUP_QUERY_LIMIT at most per query. An entity
        named twice (two steps, or a step repeated) goes to the next query, after the first has written: two
        rows of one entity in one query would both read it as it was before."""
        rounds: list[list[tuple[int, Execution]]] = []
        named: list[set[str]] = []  # each round's entity ids
        for item in items:
            entity_id = item[1].entity_id
            k = next(
                (k for k, ids in enumerate(named) if entity_id not in ids and len(ids) < GROUP_QUERY_LIMIT), len(rounds)
            )
            if k == len(rounds):
                rounds.append([])
                named.append(set())
            rounds[k].append(item)
            named[k].add(entity_id)
        done: list[tuple[int, StepOutput]] = []
        for r in rounds:
            outs = await self.apply_group([x for _, x in r])
            for (i, x), out in zip(r, outs, strict=True):
                count_outcome(x.action_name, out)
                done.append((i, out))
        return done

    async def apply_group(self, executions: list[Execution]) -> list[StepOutput]:
        """`apply` for entities of one entity type, action and parameters, their ids distinct, in one query.
        Should the graph reject that query, each entity is applied on its own (its key finds anything the
        rejected query might have applied), so an entity's outcome is never another's."""
        first = executions[0]
        items = [{"entity_id": x.entity_id, "key": x.key, "record": x.record} for x in executions]
        try:
            query, params = group_execution_query(
                self.ontology, first.entity_type, first.action_name, items, first.parameters
            )
            rows = await self.graph.write_query(query, params)
        except (UnknownName, GraphQueryError):
            return list(
                await asyncio.gather(
                    *(
                        self.apply(x.entity_type, x.action_name, x.entity_id, x.key, x.record, x.retry, x.parameters)
                        for x in executions
                    )
                )
            )
        found: dict[int, list[Any]] = {}
        for row in rows.rows:
            found.setdefault(row[0], row[1:])  # an id on two nodes: the first row, as `apply` reads it
        return [
            self._output(x.entity_type, x.action_name, x.entity_id, found.get(i), x.retry)
            for i, x in enumerate(executions)
        ]

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
    ) -> StepOutput:
        """Apply the action once under `key`: checks, effects and the ActionRecord in one query. `expected`:
        values the entity must still hold (checked in the same query), or nothing is applied."""
        try:
            query, params = execution_query(
                self.ontology, entity_type, action_name, entity_id, key, record, parameters, expected
            )
            rows = await self.graph.write_query(query, params)
        except (UnknownName, GraphQueryError) as exc:
            return action_output({"entity_id": entity_id, "error": str(exc)}, False, 0.0, str(exc), retry)
        return self._output(entity_type, action_name, entity_id, rows.rows[0] if rows.rows else None, retry)

    @staticmethod
    def _output(entity_type: str, action_name: str, entity_id: str, row: list[Any] | None, retry: int) -> StepOutput:
        """An execution query's row for the entity as the step's output (None: no such entity)."""
        if row is None:
            reason = f"no {entity_type} {entity_id!r}"
            return action_output({"entity_id": entity_id, "error": reason}, False, 0.9, reason, retry)
        before, after, failures, already, keys, old_before, old_after, before_keys, after_keys = row
        if failures and not already:
            return action_output(
                {"entity_id": entity_id, "error": "; ".join(failures), "failures": failures},
                False,
                0.9,
                "; ".join(failures),
                retry,
            )
        # Applied now, or by an earlier attempt of this very step: then report what that attempt changed.
        changes = (
            recorded_changes(
                keys, recorded_values(keys, old_before, before_keys), recorded_values(keys, old_after, after_keys)
            )
            if already
            else _changes(before, after)
        )
        return action_output(
            {"entity_id": entity_id, "changes": changes, "already_applied": already},
            True,
            0.95,
            f"{action_name} applied to {entity_type} {entity_id}",
            retry,
        )


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        k: {"before": before.get(k), "after": after.get(k)}
        for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k)
    }
