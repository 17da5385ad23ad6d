"""check_batch_parent: the local activity an ActionBatchWorkflow runs before it writes anything. Any Temporal
client can start a workflow of its own that starts a batch as its child, so having a parent proves nothing;
the parent must be one of this service's agent runs (its workflow type, on this worker's workflow queue,
where only this code runs), and that run's own history must say it started exactly this batch: the
StartChildWorkflowExecutionInitiated event for the batch's id carries the batch's input, word for word. The
agent run starts a batch only once it was approved (workflows/action_flow.py), so the history is the
approval's record, and nobody but the agent's code writes it."""

from __future__ import annotations

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistoryEventAsyncIterator
from temporalio.service import RPCError, RPCStatusCode

from contracts.action_path import BatchRequest
from contracts.batch_parent import BatchParentCheck, BatchParentVerdict
from contracts.names import BATCH_WORKFLOW_NAME, WORKFLOW_NAME, Activities

STARTED_CHILD = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED


class BatchParents:
    def __init__(self, client: Client, workflow_queue: str) -> None:
        """`workflow_queue`: this worker's workflow task queue, the only one whose runs may start a batch."""
        self.client = client
        self.workflow_queue = workflow_queue

    @activity.defn(name=Activities.CHECK_BATCH_PARENT)
    async def check_batch_parent(self, check: BatchParentCheck) -> BatchParentVerdict:
        """Approved when the parent is an agent run on this worker's queue whose history started exactly this
        batch; otherwise the refusal, in plain words. Temporal being unreachable raises (the check is retried)."""
        parent = self.client.get_workflow_handle(check.parent_id, run_id=check.parent_run_id)
        try:
            described = await parent.describe()
        except RPCError as exc:
            if exc.status is RPCStatusCode.NOT_FOUND:
                return BatchParentVerdict(refusal=f"its parent run {check.parent_id} does not exist")
            raise
        if described.workflow_type != WORKFLOW_NAME or described.task_queue != self.workflow_queue:
            return BatchParentVerdict(
                refusal=f"it was started by {described.workflow_type} on task queue "
                f"{described.task_queue}, not by an agent run of this service"
            )
        if check.request.workflow_id != check.parent_id:
            return BatchParentVerdict(
                refusal=f"it claims run {check.request.workflow_id}, but was started by run {check.parent_id}"
            )
        if not await self._started_exactly(parent.fetch_history_events(), check):
            return BatchParentVerdict(
                refusal=f"run {check.parent_id} never started this batch with these targets and values"
            )
        return BatchParentVerdict()

    async def _started_exactly(self, events: WorkflowHistoryEventAsyncIterator, check: BatchParentCheck) -> bool:
        """Whether the parent's history holds the start of this batch with exactly its input."""
        async for event in events:
            if event.event_type != STARTED_CHILD:
                continue
            started = event.start_child_workflow_execution_initiated_event_attributes
            if started.workflow_id != check.batch_id or started.workflow_type.name != BATCH_WORKFLOW_NAME:
                continue
            [given] = await self.client.data_converter.decode(started.input.payloads, [BatchRequest])
            if given == check.request:
                return True
        return False
