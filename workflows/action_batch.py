"""Batch execution of one ACTION over many entities, in workflow code.

`run_window` fans out the entities through a sliding window of at most `max_concurrent` in flight, each
activity with its own timeout and retries (safe: every execution carries an idempotency key), and streams
action_progress / action_error as each completes. With `group_size` > 1 each activity executes a group of
entities at once (`execute_actions`), so the per-activity bookkeeping (about 1 ms of the worker's CPU for a
local activity, a server round trip for a regular one) is paid once per group: at 1,000 entities x 50 ms
with 50 in flight that bookkeeping was as large as the batch's ideal time (BENCHMARKS.md). A group frees its
slots together, when its slowest entity is done; a group that fails as a whole is run again entity by
entity, whose idempotency keys report what an earlier attempt applied. The parent workflow runs a small batch
inline; a large one as ActionBatchWorkflow children of `action_window` entities each, one after
another, so no history grows with the batch (10,000 entities stay far under 10,000 events each).

Every write is bound to its approval. The executions are local activities only (activities/actions.py refuses
to write when scheduled through the server), so only this code, in a run of this worker, calls them; and a
batch child writes nothing until `check_batch_parent` (activities/batch_parent.py) found that its parent is an
agent run of this service whose own history started exactly this batch: same run, step, targets and values.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts.action_path import (
        ActionGroup,
        ActionGroupOutput,
        ActionTarget,
        BatchRequest,
        BatchSummary,
        EntityOutcome,
        error_event,
        event_message,
        progress_event,
    )
    from contracts.batch_parent import BatchParentCheck, BatchParentVerdict
    from contracts.names import BATCH_WORKFLOW_NAME, Activities
    from contracts.plan import ExecutionStep
    from contracts.query_path import StepInput, StepOutput
    from contracts.wire import AgentResponse

from workflows.errors import LOCAL_ACTIVITY_FAILED, failure_message
from workflows.outbox import Outbox


def outcome_of(entity_id: str, out: StepOutput) -> EntityOutcome:
    try:
        payload = json.loads(out.output)
    except json.JSONDecodeError:
        payload = {}
    if out.success:
        return EntityOutcome(entity_id=entity_id, success=True, changes=payload.get("changes", {}))
    return EntityOutcome(entity_id=entity_id, success=False, error=out.error or payload.get("error", "failed"))


GROUPS_IN_FLIGHT = 5  # groups a window keeps running: slots free in steps of max_concurrent / 5


def group_size_for(max_concurrent: int, configured: int) -> int:
    """Entities per execution activity: as configured, or (0) a fifth of the window, so it still slides."""
    return configured or max(1, max_concurrent // GROUPS_IN_FLIGHT)


def _step_input(req: BatchRequest, target: ActionTarget) -> StepInput:
    arguments = {"entity_type": req.entity_type, "action_name": req.action_name, "entity_id": target.entity_id}
    if req.parameters:  # step arguments are text: the parameters as one JSON object, when the action has any
        arguments["parameters"] = json.dumps(req.parameters, sort_keys=True)
    step = ExecutionStep(id=req.step_id, function=Activities.EXECUTE_ACTION, arguments=arguments)
    return StepInput(question=req.question, step=step, workflow_id=req.workflow_id)


async def _execute(req: BatchRequest, name: str, arg: StepInput | ActionGroup, result_type: type) -> object:
    retry = RetryPolicy(
        initial_interval=timedelta(milliseconds=200),
        maximum_interval=timedelta(seconds=5),
        maximum_attempts=req.max_attempts,
    )
    timeout = timedelta(seconds=req.timeout_s)  # a group's entities run at once: it takes its slowest one's time
    # Always local: the writing activities refuse to run as ordinary activities, which any Temporal client
    # could schedule with a run id of its choosing.
    return await workflow.execute_local_activity(
        name, arg, result_type=result_type, start_to_close_timeout=timeout, retry_policy=retry
    )


async def _execute_one(req: BatchRequest, target: ActionTarget) -> EntityOutcome:
    try:
        out = await _execute(req, Activities.EXECUTE_ACTION, _step_input(req, target), StepOutput)
    except LOCAL_ACTIVITY_FAILED as exc:  # local or not: either way the entity is reported, not lost
        return EntityOutcome(entity_id=target.entity_id, success=False, error=f"not executed: {failure_message(exc)}")
    assert isinstance(out, StepOutput)
    return outcome_of(target.entity_id, out)


async def _execute_group(req: BatchRequest, targets: list[ActionTarget]) -> list[EntityOutcome]:
    if len(targets) == 1:
        return [await _execute_one(req, targets[0])]
    group = ActionGroup(steps=[_step_input(req, t) for t in targets])
    try:
        out = await _execute(req, Activities.EXECUTE_ACTIONS, group, ActionGroupOutput)
    except LOCAL_ACTIVITY_FAILED:  # entity by entity: each is reported as it ended, applied or not
        return list(await asyncio.gather(*(_execute_one(req, t) for t in targets)))
    assert isinstance(out, ActionGroupOutput)
    return [outcome_of(t.entity_id, o) for t, o in zip(targets, out.outputs, strict=True)]


async def run_window(req: BatchRequest, emit: Callable[[AgentResponse], None]) -> BatchSummary:
    """Every target of the window, at most `max_concurrent` at a time, in the targets' order."""
    size = max(1, min(req.group_size, req.max_concurrent))
    slots = asyncio.Semaphore(max(1, req.max_concurrent // size))
    summary = BatchSummary()
    total = req.total or len(req.targets)

    async def one(targets: list[ActionTarget]) -> None:
        async with slots:
            outcomes = await _execute_group(req, targets)
        for outcome in outcomes:
            summary.add(outcome)
            emit(event_message(progress_event(req.completed_before + summary.total, total, outcome)))
            if not outcome.success:
                emit(event_message(error_event(outcome)))

    await asyncio.gather(*(one(req.targets[i : i + size]) for i in range(0, len(req.targets), size)))
    return summary


async def _parent_refusal(req: BatchRequest) -> str:
    """Why this batch must not run ("" when its parent is the agent run that started exactly it): the parent's
    type, queue and history are read by a local activity (activities/batch_parent.py)."""
    info = workflow.info()
    if info.parent is None:
        return "it was started on its own"
    check = BatchParentCheck(
        batch_id=info.workflow_id, parent_id=info.parent.workflow_id, parent_run_id=info.parent.run_id, request=req
    )
    verdict = await workflow.execute_local_activity(
        Activities.CHECK_BATCH_PARENT,
        check,
        result_type=BatchParentVerdict,
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10), maximum_attempts=10),
    )
    return verdict.refusal


# Outside the sandbox: this is the hot loop of a large batch, and the sandbox's per-activation cost
# was a third of its time (1,000 entities: 1.72 s -> 1.08 s, bench notes in BENCHMARKS.md). Its code is
# small and deterministic by inspection, and the committed batch history is replayed in CI.
@workflow.defn(name=BATCH_WORKFLOW_NAME, sandboxed=False)
class ActionBatchWorkflow:
    """One window of a large batch, streaming its own progress to the parent's caller."""

    @workflow.run
    async def run(self, req: BatchRequest) -> BatchSummary:
        # Only an agent run that planned, dry-ran and had the batch approved starts it, as its child: a
        # Temporal client that starts a batch, itself or from a workflow of its own, would change the graph
        # with no approval at all.
        refusal = await _parent_refusal(req)
        if refusal:
            raise ApplicationError(
                f"An action batch runs only as part of an agent run that approved it; "
                f"{refusal}, so nothing was changed.",
                type="BatchWithoutApproval",
                non_retryable=True,
            )
        outbox = Outbox(req.response_topic, req.request_id, req.message_prefix)
        summary = await run_window(req, outbox.emit)
        await outbox.flush()
        return summary
