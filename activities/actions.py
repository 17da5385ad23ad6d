"""The action path's activities: resolve_action_targets (which entities a request means),
validate_action_batch (the dry run over all of them, one read-only query per thousand), execute_action
(one entity; the batch is the workflow's fan-out) and execute_actions (a group of them at once, in one
write query: FalkorDB has one writer, whose fixed cost a group then pays once instead of per entity). The
read-only look-ups a plan may use (list_available_actions, get_action_details,
validate_action_preconditions) are tools (tools/).

Targets are chosen by id, through a related entity, by property filters, or filters with either, in
parameterised read-only queries (actions/targets.py). An execution is one atomic query
(actions/queries.py) carrying an idempotency key of the run, the step and the entity and
the action's parameters: a retried or replayed activity finds its key and applies nothing twice.
Each result says what changed (before/after) or which preconditions failed, in plain words.

execute_action(s) write only as local activities of the workflows family's runs (`_require_local`), never as
activities any Temporal client could schedule on a task queue.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from prometheus_client import Counter, Gauge
from temporalio import activity
from temporalio.exceptions import ApplicationError

from actions.ontology import Ontology, UnknownName
from actions.queries import (
    RECORD_LABEL,
    batch_validation_query,
    execution_query,
    group_execution_query,
    recorded_changes,
    recorded_values,
)
from actions.targets import targets_by_id_query, targets_query
from actions.values import check_filters, check_parameters
from backends.graph_store import GraphQueryError, GraphStore
from contracts.action_path import (
    LISTED,
    ActionGroup,
    ActionGroupOutput,
    ActionIntent,
    ActionTarget,
    DryRunInput,
    DryRunOutput,
    EntityOutcome,
    PropertyFilter,
    ResolveTargetsInput,
    TargetsOutput,
    filters_text,
)
from contracts.names import Activities
from contracts.query_path import StepInput, StepOutput
from tools.action_tool import action_output


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: {"before": before.get(k), "after": after.get(k)}
            for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}


FILTERS_ONLY_CONFIDENCE = 0.85  # below the default approval threshold (0.9): see _targets_by_filters
LEFT_OUT_CONFIDENCE = 0.2  # far below approval: the request states something the selection ignores
IN_FLIGHT = Gauge("tgca_actions_in_flight", "Action executions running in this process")
EXECUTED = Counter("tgca_actions", "Action executions that returned a result, by action and outcome (applied; "
                   "repeated: an earlier attempt had applied it; failed)",
                   ["action", "outcome"])
DRY_RUN_CHUNK = 1000
GROUP_QUERY_LIMIT = 1000  # entities per group execution query


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
        """The action path's read-only activities, on the tools queue."""
        return [self.resolve_action_targets, self.validate_action_batch]

    def writers(self) -> list[Any]:
        """The activities that change entities: the workflows family's, run only as its runs' local activities."""
        return [self.execute_action, self.execute_actions]

    @activity.defn(name=Activities.RESOLVE_ACTION_TARGETS)
    async def resolve_action_targets(self, request: ResolveTargetsInput) -> TargetsOutput:
        """The entities an action intent names, by id, through a related entity or by property filters
        alone, narrowed by its filters; at most `max_targets`."""
        found = await self._targets(request)
        if not request.left_out or found.error is not None:
            return found
        left_out = "; ".join(request.left_out)
        if not found.targets:
            return found.model_copy(update={"reasoning": f"{found.reasoning} (left out of the selection: {left_out})"})
        # The request states something the selection ignores: these may be more entities than were asked
        # for, so a human sees them first, told in the first words what was left out.
        return found.model_copy(update={"confidence": min(found.confidence, LEFT_OUT_CONFIDENCE),
                                        "reasoning": f"left out of the selection: {left_out}; then {found.reasoning}"})

    async def _targets(self, request: ResolveTargetsInput) -> TargetsOutput:
        intent = request.intent
        try:
            self.ontology.require_class(intent.entity_type)
            filters, problems = check_filters(self.ontology, intent.entity_type, intent.filters)
            if problems:
                return TargetsOutput(error="; ".join(problems))
            if intent.entity_ids:
                if len(intent.entity_ids) > request.max_targets:
                    return TargetsOutput(error=f"more than {request.max_targets} entities named; split the request")
                return await self._targets_by_id(intent, filters)
            if intent.related_class:
                related_filters, problems = check_filters(self.ontology, intent.related_class, intent.related_filters)
                if problems:
                    return TargetsOutput(error="; ".join(problems))
                if intent.related_name.strip():
                    return await self._targets_by_relation(intent, filters, related_filters, request.max_targets)
                if related_filters:
                    return await self._targets_by_related_filters(intent, filters, related_filters,
                                                                  request.max_targets)
                return TargetsOutput(error=f"no {intent.related_class} named")
            if filters:
                return await self._targets_by_filters(intent, filters, request.max_targets)
            return TargetsOutput(error="no targets named: give ids, a related entity or property filters")
        except (UnknownName, GraphQueryError) as exc:
            return TargetsOutput(error=str(exc))

    async def _targets_by_id(self, intent: ActionIntent, filters: list[PropertyFilter]) -> TargetsOutput:
        ids = list(dict.fromkeys(intent.entity_ids))
        query, params = targets_by_id_query(self.ontology, intent.entity_type, ids, filters)
        rows = await self.graph.ro_query(query, params, max_rows=len(ids))
        found = {str(k): (str(v), bool(m)) for k, v, m in rows.rows}
        missing = [i for i in ids if i not in found]
        excluded = [i for i in ids if i in found and not found[i][1]]
        targets = [ActionTarget(entity_id=i, entity_name=found[i][0]) for i in ids if i in found and found[i][1]]
        notes = [f"not found: {', '.join(missing[:20])}"] if missing else []
        if excluded:  # named, but the request's own conditions leave them out
            notes.append(f"not matching {filters_text(filters)}: {', '.join(excluded[:20])}")
        reasoning = "; ".join(notes) or "every named id exists" + (f" and matches {filters_text(filters)}"
                                                                     if filters else "")
        return TargetsOutput(targets=targets, confidence=0.5 if missing else 0.95, reasoning=reasoning)

    async def _targets_by_relation(self, intent: ActionIntent, filters: list[PropertyFilter],
                                   related_filters: list[PropertyFilter], limit: int) -> TargetsOutput:
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
        if related_filters:
            names += f" with {filters_text(related_filters)}"
        return await self._related_targets(intent, filters, related_filters, limit, keys,
                                           f"{label} {names}", confidence, f" ({how})")

    async def _targets_by_related_filters(self, intent: ActionIntent, filters: list[PropertyFilter],
                                          related_filters: list[PropertyFilter], limit: int) -> TargetsOutput:
        """'Orders of suppliers in Y': through every related entity that matches the related filters."""
        return await self._related_targets(
            intent, filters, related_filters, limit, None,
            f"a {intent.related_class} with {filters_text(related_filters)}", 0.95, "")

    async def _related_targets(self, intent: ActionIntent, filters: list[PropertyFilter],
                               related_filters: list[PropertyFilter], limit: int, keys: list[str] | None,
                               of: str, confidence: float, how: str) -> TargetsOutput:
        query, params = targets_query(self.ontology, intent.entity_type, filters, limit, intent.related_class,
                                      keys, related_filters, intent.related_excluded)
        if intent.related_excluded:  # all but some: as broad as a selection by filters alone
            of, confidence = f"no {of}", min(confidence, FILTERS_ONLY_CONFIDENCE)
        rows = await self.graph.ro_query(query, params, max_rows=limit + 1, timeout_ms=60000)
        where = f" matching {filters_text(filters)}" if filters else ""
        if rows.total_rows > limit:
            return TargetsOutput(error=f"more than {limit} {intent.entity_type} entities of {of}{where}; "
                                       "narrow the request")
        targets = [ActionTarget(entity_id=str(k), entity_name=str(v)) for k, v in rows.rows]
        return TargetsOutput(targets=targets, confidence=confidence,
                             reasoning=f"{len(targets)} {intent.entity_type} of {of}{where}{how}")

    async def _targets_by_filters(self, intent: ActionIntent, filters: list[PropertyFilter],
                                  limit: int) -> TargetsOutput:
        query, params = targets_query(self.ontology, intent.entity_type, filters, limit)
        rows = await self.graph.ro_query(query, params, max_rows=limit + 1, timeout_ms=60000)
        if rows.total_rows > limit:
            return TargetsOutput(error=f"more than {limit} {intent.entity_type} entities match "
                                       f"{filters_text(filters)}; narrow the request")
        targets = [ActionTarget(entity_id=str(k), entity_name=str(v)) for k, v in rows.rows]
        # Exactly what the filters select, but across the whole class: the broadest selection a model can
        # make of a request (a related entity it left out widens it silently), so a human confirms it.
        return TargetsOutput(targets=targets, confidence=FILTERS_ONLY_CONFIDENCE,
                             reasoning=f"{len(targets)} {intent.entity_type} matching {filters_text(filters)} "
                                       f"(selected by property filters alone)")

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

    def _prepare(self, request: StepInput) -> StepOutput | _Execution:
        """An execution's key, checked parameters and record; or, for an unknown action or invalid parameters,
        its failed output (counted), before any write."""
        args = request.step.arguments
        entity_type, action_name, entity_id = (args.get("entity_type", ""), args.get("action_name", ""),
                                               args.get("entity_id", ""))
        key = f"{request.workflow_id}:{request.step.id}:{entity_type}:{entity_id}:{action_name}"
        try:
            action = self.ontology.require_action(entity_type, action_name)
            given = json.loads(args.get("parameters") or "{}")
            parameters, problems = check_parameters(action_name, action, given if isinstance(given, dict) else {})
        except (UnknownName, json.JSONDecodeError) as exc:
            parameters, problems = {}, [str(exc)]
        if problems:  # checked when planned; a direct caller's bad values fail here, before any write
            reason = "; ".join(problems)
            EXECUTED.labels(action="(invalid request)", outcome="failed").inc()  # a caller's name: no label
            return action_output({"entity_id": entity_id, "error": reason}, False, 0.0, reason, request.retry_count)
        record = {"action": action_name, "entity_type": entity_type, "entity_id": entity_id,
                  "run_id": request.workflow_id, "step_id": request.step.id, "request": request.question[:1000],
                  "at": datetime.now(UTC).isoformat().replace("+00:00", "Z")}
        return _Execution(entity_type, action_name, entity_id, key, record, parameters, request.retry_count)

    async def _record_index_ready(self) -> None:
        if self._record_index is None:
            self._record_index = asyncio.ensure_future(self._ensure_record_index())
        try:
            await asyncio.shield(self._record_index)
        except GraphQueryError:
            self._record_index = None  # the graph was unreachable: try again with the next execution

    def _started(self, n: int) -> None:
        self.in_flight += n
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        IN_FLIGHT.inc(n)

    def _ended(self, n: int) -> None:
        self.in_flight -= n
        IN_FLIGHT.dec(n)

    @staticmethod
    def _count(action_name: str, out: StepOutput) -> None:
        repeated = out.success and bool(json.loads(out.output).get("already_applied"))
        EXECUTED.labels(action=action_name,
                        outcome="repeated" if repeated else "applied" if out.success else "failed").inc()

    @activity.defn(name=Activities.EXECUTE_ACTION)
    async def execute_action(self, request: StepInput) -> StepOutput:
        _require_local()
        x = self._prepare(request)
        if isinstance(x, StepOutput):
            return x
        await self._record_index_ready()
        self._started(1)
        try:
            if self.simulated_latency_s:
                await asyncio.sleep(self.simulated_latency_s)
            out = await self.apply(x.entity_type, x.action_name, x.entity_id, x.key, x.record, x.retry, x.parameters)
            self._count(x.action_name, out)
            return out
        finally:
            self._ended(1)

    @activity.defn(name=Activities.EXECUTE_ACTIONS)
    async def execute_actions(self, group: ActionGroup) -> ActionGroupOutput:
        """A group of a batch's entities, all at once: one activity's bookkeeping for the group instead of one
        per entity, and one write query (`group_execution_query`) for the entities of one entity type, action
        and parameters (a batch's group is always one of those; a group mixing them is split into one query
        per combination, run concurrently). Each entity keeps its own idempotency key, preconditions and
        record, so a retried group re-applies nothing and the outputs are those of `execute_action` for each
        step, in the group's order. As when each step ran concurrently, the entities are in flight together
        and wait `simulated_latency_s` once, together."""
        _require_local()
        outputs: list[StepOutput | None] = [None] * len(group.steps)
        combos: dict[tuple[str, str, str], list[tuple[int, _Execution]]] = {}
        for i, step in enumerate(group.steps):
            prepared = self._prepare(step)
            if isinstance(prepared, StepOutput):
                outputs[i] = prepared
            else:
                combo = (prepared.entity_type, prepared.action_name,
                         json.dumps(prepared.parameters, sort_keys=True, default=str))
                combos.setdefault(combo, []).append((i, prepared))
        executions = sum(len(c) for c in combos.values())
        if executions:
            await self._record_index_ready()
            self._started(executions)
            try:
                if self.simulated_latency_s:
                    await asyncio.sleep(self.simulated_latency_s)
                for applied in await asyncio.gather(*(self._apply_combo(c) for c in combos.values())):
                    for i, out in applied:
                        outputs[i] = out
            finally:
                self._ended(executions)
        assert all(o is not None for o in outputs)
        return ActionGroupOutput(outputs=cast(list[StepOutput], outputs))

    async def _apply_combo(self, items: list[tuple[int, _Execution]]) -> list[tuple[int, StepOutput]]:
        """Entities of one entity type, action and parameters, GROUP_QUERY_LIMIT at most per query. An entity
        named twice (two steps, or a step repeated) goes to the next query, after the first has written: two
        rows of one entity in one query would both read it as it was before."""
        rounds: list[list[tuple[int, _Execution]]] = []
        named: list[set[str]] = []  # each round's entity ids
        for item in items:
            entity_id = item[1].entity_id
            k = next((k for k, ids in enumerate(named) if entity_id not in ids and len(ids) < GROUP_QUERY_LIMIT),
                     len(rounds))
            if k == len(rounds):
                rounds.append([])
                named.append(set())
            rounds[k].append(item)
            named[k].add(entity_id)
        done: list[tuple[int, StepOutput]] = []
        for r in rounds:
            outs = await self.apply_group([x for _, x in r])
            for (i, x), out in zip(r, outs, strict=True):
                self._count(x.action_name, out)
                done.append((i, out))
        return done

    async def apply_group(self, executions: list[_Execution]) -> list[StepOutput]:
        """`apply` for entities of one entity type, action and parameters, their ids distinct, in one query.
        Should the graph reject that query, each entity is applied on its own (its key finds anything the
        rejected query might have applied), so an entity's outcome is never another's."""
        first = executions[0]
        items = [{"entity_id": x.entity_id, "key": x.key, "record": x.record} for x in executions]
        try:
            query, params = group_execution_query(self.ontology, first.entity_type, first.action_name, items,
                                                  first.parameters)
            rows = await self.graph.write_query(query, params)
        except (UnknownName, GraphQueryError):
            return list(await asyncio.gather(*(self.apply(x.entity_type, x.action_name, x.entity_id, x.key, x.record,
                                                          x.retry, x.parameters) for x in executions)))
        found: dict[int, list[Any]] = {}
        for row in rows.rows:
            found.setdefault(row[0], row[1:])  # an id on two nodes: the first row, as `apply` reads it
        return [self._output(x.entity_type, x.action_name, x.entity_id, found.get(i), x.retry)
                for i, x in enumerate(executions)]

    async def apply(self, entity_type: str, action_name: str, entity_id: str, key: str, record: dict[str, Any],
                    retry: int = 0, parameters: dict[str, Any] | None = None,
                    expected: dict[str, Any] | None = None) -> StepOutput:
        """Apply the action once under `key`: checks, effects and the ActionRecord in one query. `expected`:
        values the entity must still hold (checked in the same query), or nothing is applied."""
        try:
            query, params = execution_query(self.ontology, entity_type, action_name, entity_id, key, record,
                                            parameters, expected)
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
            return action_output({"entity_id": entity_id, "error": "; ".join(failures), "failures": failures}, False,
                           0.9, "; ".join(failures), retry)
        # Applied now, or by an earlier attempt of this very step: then report what that attempt changed.
        changes = (recorded_changes(keys, recorded_values(keys, old_before, before_keys),
                                    recorded_values(keys, old_after, after_keys))
                   if already else _changes(before, after))
        return action_output({"entity_id": entity_id, "changes": changes, "already_applied": already}, True, 0.95,
                       f"{action_name} applied to {entity_type} {entity_id}", retry)


def _require_local() -> None:
    """Refuse a write scheduled through the Temporal server. Anyone who can reach Temporal can schedule an
    activity by name on a task queue, with any run id; a local activity is run only by the worker hosting the
    workflow that asked for it, so a write then comes from this service's own runs, after their approval (a
    batch child's parent is checked first: workflows/action_batch.py). A call outside any activity is this
    process's own code."""
    if activity.in_activity() and not activity.info().is_local:
        raise ApplicationError(f"{activity.info().activity_type} runs only as a local activity of an agent run "
                               "that approved it; it was scheduled through Temporal, so nothing was changed.",
                               type="ActionWithoutApproval", non_retryable=True)


@dataclass(frozen=True)
class _Execution:
    """One entity's execution, checked and keyed (`ActionTools._prepare`)."""

    entity_type: str
    action_name: str
    entity_id: str
    key: str
    record: dict[str, Any]
    parameters: dict[str, Any]
    retry: int
