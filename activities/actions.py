"""The action path's activities: resolve_action_targets (which entities a request means),
validate_action_batch (the dry run over all of them, one read-only query per thousand) and
execute_action (one entity; the batch is the workflow's fan-out). The read-only look-ups a plan may use
(list_available_actions, get_action_details, validate_action_preconditions) are tools (tools/).

An execution is one atomic query (confidence_core/action_query.py) carrying an idempotency key of the
run, the step and the entity: a retried or replayed activity finds its key and applies nothing twice.
Each result says what changed (before/after) or which preconditions failed, in plain words.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Gauge
from temporalio import activity

from backends.graph_store import GraphQueryError, GraphStore
from confidence_core.action_query import (
    RECORD_LABEL,
    batch_validation_query,
    execution_query,
    recorded_changes,
)
from confidence_core.ontology import Ontology, UnknownName
from contracts.action_path import (
    LISTED,
    ActionIntent,
    ActionTarget,
    DryRunInput,
    DryRunOutput,
    EntityOutcome,
    ResolveTargetsInput,
    TargetsOutput,
)
from contracts.names import Activities
from contracts.query_path import StepInput, StepOutput
from tools.action_tool import action_output


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: {"before": before.get(k), "after": after.get(k)}
            for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}


IN_FLIGHT = Gauge("tgca_actions_in_flight", "Action executions running in this process")
DRY_RUN_CHUNK = 1000


class ActionTools:
    def __init__(self, graph: GraphStore, ontology: Ontology, simulated_latency_s: float = 0.0) -> None:
        """`simulated_latency_s` adds a delay to every execution (benchmarks: a slow downstream system)."""
        self.graph = graph
        self.ontology = ontology
        self.simulated_latency_s = simulated_latency_s
        self.in_flight = 0
        self.peak_in_flight = 0  # the most executions this process ran at once (the batch bound's evidence)
        self._record_index: asyncio.Task[None] | None = None

    async def _ensure_record_index(self) -> None:
        """Every execution looks its idempotency key up: without an index that is a scan of every record
        (measured: a 10,000-entity batch 3.7x its ideal instead of 2x). Created once per graph."""
        try:
            await self.graph.write_query(f"CREATE INDEX FOR (r:`{RECORD_LABEL}`) ON (r.key)", {})
        except GraphQueryError as exc:
            if "already indexed" not in str(exc):
                raise

    def all(self) -> list[Any]:
        """The action path's activities on the tools queue (execute_action also runs as a local activity)."""
        return [self.execute_action, self.resolve_action_targets, self.validate_action_batch]

    @activity.defn(name=Activities.RESOLVE_ACTION_TARGETS)
    async def resolve_action_targets(self, request: ResolveTargetsInput) -> TargetsOutput:
        """The entities an action intent names, by id or through a related entity, at most `max_targets`."""
        intent = request.intent
        try:
            cls = self.ontology.require_class(intent.entity_type)
            if intent.entity_ids:
                if len(intent.entity_ids) > request.max_targets:
                    return TargetsOutput(error=f"more than {request.max_targets} entities named; split the request")
                return await self._targets_by_id(intent, cls.key, cls.display)
            return await self._targets_by_relation(intent, cls.key, cls.display, request.max_targets)
        except (UnknownName, GraphQueryError) as exc:
            return TargetsOutput(error=str(exc))

    async def _targets_by_id(self, intent: ActionIntent, key: str, display: str) -> TargetsOutput:
        ids = list(dict.fromkeys(intent.entity_ids))
        rows = await self.graph.ro_query(
            f"MATCH (e:`{intent.entity_type}`) WHERE e.`{key}` IN $ids RETURN e.`{key}` AS id, e.`{display}` AS name",
            {"ids": ids}, max_rows=len(ids))
        found = {str(k): str(v) for k, v in rows.rows}
        missing = [i for i in ids if i not in found]
        targets = [ActionTarget(entity_id=i, entity_name=found[i]) for i in ids if i in found]
        if missing:
            return TargetsOutput(targets=targets, confidence=0.5,
                                 reasoning=f"not found: {', '.join(missing[:20])}")
        return TargetsOutput(targets=targets, confidence=0.95, reasoning="every named id exists")

    async def _targets_by_relation(self, intent: ActionIntent, key: str, display: str, limit: int) -> TargetsOutput:
        related = self.ontology.require_class(intent.related_class)
        label, name = intent.related_class, intent.related_name.strip()
        exact = await self.graph.ro_query(
            f"MATCH (x:`{label}`) WHERE toLower(x.`{related.display}`) = toLower($name) OR x.`{related.key}` = $name "
            f"RETURN x.`{related.key}` AS id, x.`{related.display}` AS name", {"name": name}, max_rows=20)
        confidence, how = 0.95, "exact name match"
        matches = exact
        if not exact.rows:
            matches = await self.graph.ro_query(
                f"MATCH (x:`{label}`) WHERE toLower(x.`{related.display}`) CONTAINS toLower($name) "
                f"RETURN x.`{related.key}` AS id, x.`{related.display}` AS name", {"name": name}, max_rows=20)
            confidence, how = 0.7, "partial name match"
        if not matches.rows:
            return TargetsOutput(confidence=0.0, reasoning=f"no {label} named {name!r}")
        if matches.total_rows > 1:
            confidence = min(confidence, 0.5)
            how = f"{matches.total_rows} {label} entities match {name!r}"
        keys = [str(r[0]) for r in matches.rows]
        names = ", ".join(str(r[1]) for r in matches.rows)
        rel_types = [r.type for r in self.ontology.relationships_of(intent.entity_type)
                     if {r.from_, r.to} == {intent.entity_type, label}]
        pattern = "|".join(f"`{t}`" for t in rel_types)
        rows = await self.graph.ro_query(
            f"MATCH (e:`{intent.entity_type}`)-[:{pattern}]-(x:`{label}`) WHERE x.`{related.key}` IN $keys "
            f"RETURN DISTINCT e.`{key}` AS id, e.`{display}` AS name ORDER BY id LIMIT $limit",
            {"keys": keys, "limit": limit + 1}, max_rows=limit + 1, timeout_ms=60000)
        if rows.total_rows > limit:
            return TargetsOutput(error=f"more than {limit} {intent.entity_type} entities of {names}; "
                                       "narrow the request")
        targets = [ActionTarget(entity_id=str(k), entity_name=str(v)) for k, v in rows.rows]
        return TargetsOutput(targets=targets, confidence=confidence,
                             reasoning=f"{len(targets)} {intent.entity_type} of {label} {names} ({how})")

    @activity.defn(name=Activities.VALIDATE_ACTION_BATCH)
    async def validate_action_batch(self, request: DryRunInput) -> DryRunOutput:
        """The dry run: which targets the action would fail on now, and why. Changes nothing."""
        would_succeed, failures, would_fail = 0, [], 0
        try:
            self.ontology.require_action(request.entity_type, request.action_name)
        except UnknownName as exc:
            return DryRunOutput(would_succeed=0, would_fail=len(request.entity_ids), error=str(exc))
        for i in range(0, len(request.entity_ids), DRY_RUN_CHUNK):
            chunk = request.entity_ids[i:i + DRY_RUN_CHUNK]
            query, params = batch_validation_query(self.ontology, request.entity_type, request.action_name, chunk)
            rows = await self.graph.ro_query(query, params, max_rows=len(chunk), timeout_ms=60000)
            key = self.ontology.classes[request.entity_type].key
            seen = set()
            for props, problems in rows.rows:
                seen.add(str(props.get(key)))
                if problems:
                    would_fail += 1
                    if len(failures) < LISTED:
                        failures.append(EntityOutcome(entity_id=str(props.get(key)), success=False,
                                                      error="; ".join(problems)))
                else:
                    would_succeed += 1
            for missing in [e for e in chunk if e not in seen]:
                would_fail += 1
                if len(failures) < LISTED:
                    failures.append(EntityOutcome(entity_id=missing, success=False,
                                                  error=f"no {request.entity_type} {missing!r}"))
        return DryRunOutput(would_succeed=would_succeed, failures=failures, would_fail=would_fail)

    @activity.defn(name=Activities.EXECUTE_ACTION)
    async def execute_action(self, request: StepInput) -> StepOutput:
        args = request.step.arguments
        entity_type, action_name, entity_id = (args.get("entity_type", ""), args.get("action_name", ""),
                                               args.get("entity_id", ""))
        key = f"{request.workflow_id}:{request.step.id}:{entity_type}:{entity_id}:{action_name}"
        record = {"action": action_name, "entity_type": entity_type, "entity_id": entity_id,
                  "run_id": request.workflow_id, "step_id": request.step.id, "request": request.question[:1000],
                  "at": datetime.now(UTC).isoformat().replace("+00:00", "Z")}
        if self._record_index is None:
            self._record_index = asyncio.ensure_future(self._ensure_record_index())
        try:
            await asyncio.shield(self._record_index)
        except GraphQueryError:
            self._record_index = None  # the graph was unreachable: try again with the next execution
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        IN_FLIGHT.inc()
        try:
            if self.simulated_latency_s:
                await asyncio.sleep(self.simulated_latency_s)
            return await self.apply(entity_type, action_name, entity_id, key, record, request.retry_count)
        finally:
            self.in_flight -= 1
            IN_FLIGHT.dec()

    async def apply(self, entity_type: str, action_name: str, entity_id: str, key: str, record: dict[str, Any],
                    retry: int = 0) -> StepOutput:
        """Apply the action once under `key`: checks, effects and the ActionRecord in one query."""
        try:
            query, params = execution_query(self.ontology, entity_type, action_name, entity_id, key, record)
            rows = await self.graph.write_query(query, params)
        except (UnknownName, GraphQueryError) as exc:
            return action_output({"entity_id": entity_id, "error": str(exc)}, False, 0.0, str(exc), retry)
        if not rows.rows:
            reason = f"no {entity_type} {entity_id!r}"
            return action_output({"entity_id": entity_id, "error": reason}, False, 0.9, reason, retry)
        before, after, failures, already, keys, old_before, old_after = rows.rows[0]
        if failures and not already:
            return action_output({"entity_id": entity_id, "error": "; ".join(failures), "failures": failures}, False,
                           0.9, "; ".join(failures), retry)
        # Applied now, or by an earlier attempt of this very step: then report what that attempt changed.
        changes = recorded_changes(keys, old_before, old_after) if already else _changes(before, after)
        return action_output({"entity_id": entity_id, "changes": changes, "already_applied": already}, True, 0.95,
                       f"{action_name} applied to {entity_type} {entity_id}", retry)
