"""The action path's activities: resolve_action_targets (which entities a request means),
validate_action_batch (the dry run over all of them, one read-only query per thousand), execute_action
(one entity; the batch is the workflow's fan-out) and execute_actions (a group of them at once, in one
write query: FalkorDB has one writer, whose fixed cost a group then pays once instead of per entity). The
read-only look-ups a plan may use (list_available_actions, get_action_details,
validate_action_preconditions) are tools (tools/).

Targets are found by activities/target_resolution.py; the executions' keyed, atomic writes are
activities/action_writes.py's: a retried or replayed activity applies nothing twice.

execute_action(s) write only as local activities of the workflows family's runs (`_require_local`), never as
activities any Temporal client could schedule on a task queue.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from prometheus_client import Gauge
from temporalio import activity
from temporalio.exceptions import ApplicationError

from actions.ontology import Ontology, UnknownName
from actions.queries import batch_validation_query
from activities.action_writes import ActionWriter, Execution, count_outcome, prepare
from activities.target_resolution import TargetResolver
from backends.graph_store import GraphStore
from contracts.action_path import (
    LISTED,
    ActionGroup,
    ActionGroupOutput,
    DryRunInput,
    DryRunOutput,
    EntityOutcome,
    ResolveTargetsInput,
    TargetsOutput,
)
from contracts.names import Activities
from contracts.query_path import StepInput, StepOutput

LEFT_OUT_CONFIDENCE = 0.2  # far below approval: the request states something the selection ignores
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
        self.targets = TargetResolver(graph, ontology)
        self.writer = ActionWriter(graph, ontology)

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
        found = await self.targets.resolve(request)
        if not request.left_out or found.error is not None:
            return found
        left_out = "; ".join(request.left_out)
        if not found.targets:
            return found.model_copy(update={"reasoning": f"{found.reasoning} (left out of the selection: {left_out})"})
        # The request states something the selection ignores: these may be more entities than were asked
        # for, so a human sees them first, told in the first words what was left out.
        return found.model_copy(
            update={
                "confidence": min(found.confidence, LEFT_OUT_CONFIDENCE),
                "reasoning": f"left out of the selection: {left_out}; then {found.reasoning}",
            }
        )

    @activity.defn(name=Activities.VALIDATE_ACTION_BATCH)
    async def validate_action_batch(self, request: DryRunInput) -> DryRunOutput:
        """The dry run: which targets the action would fail on now, and why. Changes nothing."""
        would_succeed, would_fail = 0, 0
        failures: list[EntityOutcome] = []
        try:
            self.ontology.require_action(request.entity_type, request.action_name)
        except UnknownName as exc:
            return DryRunOutput(would_succeed=0, would_fail=len(request.entity_ids), error=str(exc))
        for i in range(0, len(request.entity_ids), DRY_RUN_CHUNK):
            chunk = request.entity_ids[i : i + DRY_RUN_CHUNK]
            query, params = batch_validation_query(self.ontology, request.entity_type, request.action_name, chunk)
            rows = await self.graph.ro_query(query, params, max_rows=len(chunk), timeout_ms=60000)
            key = self.ontology.classes[request.entity_type].key
            seen = set()
            for props, problems in rows.rows:
                seen.add(str(props.get(key)))
                if problems:
                    would_fail += 1
                    if len(failures) < LISTED:
                        failures.append(
                            EntityOutcome(entity_id=str(props.get(key)), success=False, error="; ".join(problems))
                        )
                else:
                    would_succeed += 1
            for missing in [e for e in chunk if e not in seen]:
                would_fail += 1
                if len(failures) < LISTED:
                    failures.append(
                        EntityOutcome(entity_id=missing, success=False, error=f"no {request.entity_type} {missing!r}")
                    )
        return DryRunOutput(would_succeed=would_succeed, failures=failures, would_fail=would_fail)

    def _started(self, n: int) -> None:
        self.in_flight += n
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        IN_FLIGHT.inc(n)

    def _ended(self, n: int) -> None:
        self.in_flight -= n
        IN_FLIGHT.dec(n)

    @activity.defn(name=Activities.EXECUTE_ACTION)
    async def execute_action(self, request: StepInput) -> StepOutput:
        _require_local()
        x = prepare(self.ontology, request)
        if isinstance(x, StepOutput):
            return x
        await self.writer.record_index_ready()
        self._started(1)
        try:
            if self.simulated_latency_s:
                await asyncio.sleep(self.simulated_latency_s)
            out = await self.writer.apply(
                x.entity_type, x.action_name, x.entity_id, x.key, x.record, x.retry, x.parameters
            )
            count_outcome(x.action_name, out)
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
        combos: dict[tuple[str, str, str], list[tuple[int, Execution]]] = {}
        for i, step in enumerate(group.steps):
            prepared = prepare(self.ontology, step)
            if isinstance(prepared, StepOutput):
                outputs[i] = prepared
            else:
                combo = (
                    prepared.entity_type,
                    prepared.action_name,
                    json.dumps(prepared.parameters, sort_keys=True, default=str),
                )
                combos.setdefault(combo, []).append((i, prepared))
        executions = sum(len(c) for c in combos.values())
        if executions:
            await self.writer.record_index_ready()
            self._started(executions)
            try:
                if self.simulated_latency_s:
                    await asyncio.sleep(self.simulated_latency_s)
                for applied in await asyncio.gather(*(self.writer.apply_combo(c) for c in combos.values())):
                    for i, out in applied:
                        outputs[i] = out
            finally:
                self._ended(executions)
        assert all(o is not None for o in outputs)
        return ActionGroupOutput(outputs=cast(list[StepOutput], outputs))

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
        """One entity's write, outside any run: undo applies an inverse through it (backends/action_history.py),
        exactly as a run applies an action (`ActionWriter.apply`)."""
        return await self.writer.apply(entity_type, action_name, entity_id, key, record, retry, parameters, expected)


def _require_local() -> None:
    """Refuse a write scheduled through the Temporal server. Anyone who can reach Temporal can schedule an
    activity by name on a task queue, with any run id; a local activity is run only by the worker hosting the
    workflow that asked for it, so a write then comes from this service's own runs, after their approval (a
    batch child's parent is checked first: workflows/action_batch.py). A call outside any activity is this
    process's own code."""
    if activity.in_activity() and not activity.info().is_local:
        raise ApplicationError(
            f"{activity.info().activity_type} runs only as a local activity of an agent run "
            "that approved it; it was scheduled through Temporal, so nothing was changed.",
            type="ActionWithoutApproval",
            non_retryable=True,
        )
