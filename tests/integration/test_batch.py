"""The batch window on the real Temporal dev server and FalkorDB: never more than `max_concurrent`
actions at once, progress for every entity, a batch run again under the same run id applies nothing twice,
a batch that no run started changes nothing, and the parent check approves only the very batch its parent's
history started (tests/attacks/test_batch_bound_to_approval.py: a batch or a write from anything but an agent
run)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio import activity, workflow
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from actions.ontology import Ontology
from activities.actions import ActionTools
from activities.batch_parent import BatchParents
from activities.publish import PublishActivities
from backends.graph_store import GraphStore
from contracts.action_path import ActionGroup, ActionGroupOutput, ActionTarget, BatchRequest, BatchSummary
from contracts.batch_parent import BatchParentCheck
from contracts.names import WORKFLOW_NAME, Activities
from contracts.wire import AgentResponse
from embedded import demo_graph
from workflows.action_batch import ActionBatchWorkflow

SUBMITTED = [o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "submitted"][:24]


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class ApprovingRun:
    """Stands for the agent run that approved the batch, under its name and on the worker's queue: a batch runs
    only as the child of such a run that started exactly it."""

    @workflow.run
    async def run(self, req: BatchRequest) -> BatchSummary:
        return await workflow.execute_child_workflow(
            ActionBatchWorkflow.run, req, result_type=BatchSummary, id=f"{workflow.info().workflow_id}-batch"
        )


@pytest.mark.parametrize("group_size", [1, 2], ids=["one-per-activity", "groups-of-2"])
async def test_window_bound_progress_and_exactly_once(
    temporal_env: WorkflowEnvironment, falkordb_url: str, demo_copy, group_size: int
) -> None:
    name, g = demo_copy
    store = GraphStore(falkordb_url, name)
    tools = ActionTools(store, Ontology.load(demo_graph.ONTOLOGY_PATH), simulated_latency_s=0.1)
    published: list[dict[str, Any]] = []

    class Caller:  # the worker's publisher: what the caller would receive
        async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
            published.append(response.model_dump())

    queue = f"window-{uuid.uuid4().hex[:8]}"
    request = BatchRequest(
        workflow_id=f"run-{queue}",
        question="approve these",
        entity_type="PurchaseOrder",
        action_name="approve",
        targets=[ActionTarget(entity_id=po) for po in SUBMITTED],
        max_concurrent=4,
        group_size=group_size,
        response_topic="t",
        request_id="r",
        message_prefix="m",
    )
    client = temporal_env.client
    async with Worker(
        client,
        task_queue=queue,
        workflows=[ApprovingRun, ActionBatchWorkflow],
        activities=[
            tools.execute_action,
            tools.execute_actions,
            PublishActivities(Caller()).publish,
            BatchParents(client, queue).check_batch_parent,
        ],
    ):
        summary = await client.execute_workflow(
            ApprovingRun.run, request, id=request.workflow_id, task_queue=queue, result_type=BatchSummary
        )
        assert tools.peak_in_flight == 4  # the bound was reached and never exceeded
        assert (summary.total, summary.succeeded, summary.failed) == (24, 24, 0)
        progress = [r for r in published if '"action_progress"' in r["content"]]
        assert sorted(int(r["content"].split('"completed": ')[1].split(",")[0]) for r in progress) == list(range(1, 25))
        # The same run id again (a replayed or retried window): nothing is applied a second time.
        again = await client.execute_workflow(
            ApprovingRun.run, request, id=request.workflow_id, task_queue=queue, result_type=BatchSummary
        )
    await store.aclose()
    assert again.succeeded == 24 and again.successes[0].changes == {
        "status": {"before": "submitted", "after": "approved"}
    }
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(DISTINCT r.key)")).result_set[0][0]
    assert records == 24
    statuses = (
        await g.ro_query(
            "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": SUBMITTED}
        )
    ).result_set
    assert statuses == [["approved"]]


async def test_a_group_that_fails_as_a_whole_runs_again_entity_by_entity(
    temporal_env: WorkflowEnvironment, falkordb_url: str, demo_copy
) -> None:
    """A group's activity that dies after applying half its entities: the window runs those entities one by
    one, and each is reported as it ended (the applied ones found by their keys), none applied twice."""
    name, g = demo_copy
    store = GraphStore(falkordb_url, name)
    tools = ActionTools(store, Ontology.load(demo_graph.ONTOLOGY_PATH))

    @activity.defn(name=Activities.EXECUTE_ACTIONS)
    async def dies_halfway(group: ActionGroup) -> ActionGroupOutput:
        for step in group.steps[: len(group.steps) // 2]:
            await tools.execute_action(step)
        raise ApplicationError("worker lost mid-group", non_retryable=True)

    class Caller:
        async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
            pass

    queue = f"groups-{uuid.uuid4().hex[:8]}"
    targets = SUBMITTED[:12]
    request = BatchRequest(
        workflow_id=f"run-{queue}",
        question="approve these",
        entity_type="PurchaseOrder",
        action_name="approve",
        targets=[ActionTarget(entity_id=po) for po in targets],
        max_concurrent=8,
        group_size=4,
        response_topic="t",
        request_id="r",
        message_prefix="m",
    )
    async with Worker(
        temporal_env.client,
        task_queue=queue,
        workflows=[ApprovingRun, ActionBatchWorkflow],
        activities=[
            tools.execute_action,
            dies_halfway,
            PublishActivities(Caller()).publish,
            BatchParents(temporal_env.client, queue).check_batch_parent,
        ],
    ):
        summary = await temporal_env.client.execute_workflow(
            ApprovingRun.run, request, id=request.workflow_id, task_queue=queue, result_type=BatchSummary
        )
    await store.aclose()
    assert (summary.total, summary.succeeded, summary.failed) == (12, 12, 0)
    assert sorted(o.entity_id for o in summary.successes) == sorted(targets)
    assert all(o.changes == {"status": {"before": "submitted", "after": "approved"}} for o in summary.successes)
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r), count(DISTINCT r.key)")).result_set
    assert records == [[12, 12]]


async def test_a_batch_started_by_a_client_changes_nothing(
    temporal_env: WorkflowEnvironment, falkordb_url: str, demo_copy
) -> None:
    """A Temporal client that starts the batch workflow itself, with any targets, skips the plan, the dry run
    and the approval: the batch refuses, and no entity changes."""
    name, g = demo_copy
    store = GraphStore(falkordb_url, name)
    tools = ActionTools(store, Ontology.load(demo_graph.ONTOLOGY_PATH))
    queue = f"alone-{uuid.uuid4().hex[:8]}"
    request = BatchRequest(
        workflow_id=f"run-{queue}",
        question="approve these",
        entity_type="PurchaseOrder",
        action_name="approve",
        targets=[ActionTarget(entity_id=po) for po in SUBMITTED[:3]],
        max_concurrent=2,
        response_topic="t",
        request_id="r",
        message_prefix="m",
    )
    async with Worker(
        temporal_env.client,
        task_queue=queue,
        workflows=[ActionBatchWorkflow],
        activities=[tools.execute_action, tools.execute_actions],
    ):
        with pytest.raises(WorkflowFailureError) as failed:
            await temporal_env.client.execute_workflow(
                ActionBatchWorkflow.run, request, id=queue, task_queue=queue, result_type=BatchSummary
            )
    await store.aclose()
    assert "runs only as part of an agent run that approved it" in str(failed.value.cause)
    statuses = (
        await g.ro_query(
            "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": SUBMITTED[:3]}
        )
    ).result_set
    assert statuses == [["submitted"]]


async def test_the_parent_check_wants_this_very_batch_in_the_parent_history(
    temporal_env: WorkflowEnvironment, falkordb_url: str, demo_copy
) -> None:
    """After a window ran as the child of an agent run: the check approves exactly that batch, and refuses other
    targets or values, another run id, or the same parent seen from another queue."""
    name, _ = demo_copy
    store = GraphStore(falkordb_url, name)
    tools = ActionTools(store, Ontology.load(demo_graph.ONTOLOGY_PATH))
    queue = f"parent-{uuid.uuid4().hex[:8]}"
    request = BatchRequest(
        workflow_id=f"run-{queue}",
        question="approve these",
        entity_type="PurchaseOrder",
        action_name="approve",
        targets=[ActionTarget(entity_id=po) for po in SUBMITTED[:2]],
        max_concurrent=2,
        response_topic="t",
        request_id="r",
        message_prefix="m",
    )
    client = temporal_env.client
    parents = BatchParents(client, queue)

    class Caller:
        async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
            pass

    async with Worker(
        client,
        task_queue=queue,
        workflows=[ApprovingRun, ActionBatchWorkflow],
        activities=[
            tools.execute_action,
            tools.execute_actions,
            PublishActivities(Caller()).publish,
            parents.check_batch_parent,
        ],
    ):
        handle = await client.start_workflow(
            ApprovingRun.run, request, id=request.workflow_id, task_queue=queue, result_type=BatchSummary
        )
        assert (await handle.result()).succeeded == 2
    await store.aclose()

    def check(req: BatchRequest) -> BatchParentCheck:
        return BatchParentCheck(
            batch_id=f"{request.workflow_id}-batch",
            parent_id=request.workflow_id,
            parent_run_id=handle.result_run_id or "",
            request=req,
        )

    assert (await parents.check_batch_parent(check(request))).approved
    other_targets = request.model_copy(update={"targets": [ActionTarget(entity_id=po) for po in SUBMITTED[:3]]})
    other_values = request.model_copy(update={"parameters": {"reason": "audit"}})
    for changed in (other_targets, other_values):
        assert (
            await parents.check_batch_parent(check(changed))
        ).refusal == f"run {request.workflow_id} never started this batch with these targets and values"
    other_run = request.model_copy(update={"workflow_id": "agent-someone-else"})
    assert (
        await parents.check_batch_parent(check(other_run))
    ).refusal == f"it claims run agent-someone-else, but was started by run {request.workflow_id}"
    assert (
        await BatchParents(client, "tgca-workflows").check_batch_parent(check(request))
    ).refusal == f"it was started by {WORKFLOW_NAME} on task queue {queue}, not by an agent run of this service"
