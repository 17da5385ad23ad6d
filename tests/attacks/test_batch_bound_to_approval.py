"""Every write bound to its approval, against the real worker families on the Temporal dev server and
FalkorDB: a client that can reach Temporal runs a workflow of its own, on a task queue of its own with a worker
of its own, and from there (1) starts ActionBatchWorkflow as its child on the service's task queue, or (2)
schedules execute_action(s) by name on the service's queue as ordinary activities, under a forged run id.
Neither changes an entity or leaves an ActionRecord, and each is refused with an error that says why. The
approved path still writes (tests/integration/test_action_path.py, test_batch.py)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio import workflow
from temporalio.client import WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError
from temporalio.worker import Worker

from contracts.action_path import ActionGroup, ActionTarget, BatchRequest, BatchSummary
from contracts.names import BATCH_WORKFLOW_NAME, WORKFLOW_NAME, Activities, TaskQueues
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput
from embedded import demo_graph
from tests.scripted_llm import ScriptedLLM

SUBMITTED = [o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "submitted"][:2]


class Attack(BaseModel):
    queue: str  # the service's task queue, where the attacker sends the batch or the activity
    request: BatchRequest


async def start_batch(attack: Attack) -> BatchSummary:
    """The attacker's run: the service's batch as its own child, on the service's queue."""
    return await workflow.execute_child_workflow(
        BATCH_WORKFLOW_NAME,
        attack.request,
        id=f"{workflow.info().workflow_id}-batch-1",
        task_queue=attack.queue,
        result_type=BatchSummary,
    )


@workflow.defn(name="AttackersOwnRun", sandboxed=False)
class AttackersOwnRun:
    @workflow.run
    async def run(self, attack: Attack) -> BatchSummary:
        return await start_batch(attack)


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class LookalikeAgentRun:
    """The agent workflow's name, on the attacker's own queue, with the attacker's own code."""

    @workflow.run
    async def run(self, attack: Attack) -> BatchSummary:
        return await start_batch(attack)


def step(attack: Attack, target: ActionTarget) -> StepInput:
    arguments = {
        "entity_type": attack.request.entity_type,
        "action_name": attack.request.action_name,
        "entity_id": target.entity_id,
    }
    return StepInput(
        question=attack.request.question,
        workflow_id=attack.request.workflow_id,
        step=ExecutionStep(id="execute", function=Activities.EXECUTE_ACTION, arguments=arguments),
    )


class Refusal(BaseModel):
    type: str
    message: str


@workflow.defn(name="AttackersDirectWrite", sandboxed=False)
class AttackersDirectWrite:
    """Schedules execute_action (one entity) and execute_actions (a group) by name, as ordinary activities; says
    how each ended (None: it ran)."""

    @workflow.run
    async def run(self, attack: Attack) -> list[Refusal | None]:
        group = ActionGroup(steps=[step(attack, t) for t in attack.request.targets])
        ended: list[Refusal | None] = []
        for name, arg in (
            (Activities.EXECUTE_ACTION, step(attack, attack.request.targets[0])),
            (Activities.EXECUTE_ACTIONS, group),
        ):
            try:
                await workflow.execute_activity(
                    name,
                    arg,
                    task_queue=attack.queue,
                    start_to_close_timeout=timedelta(seconds=30),
                    retry_policy=RetryPolicy(maximum_attempts=1),
                )
                ended.append(None)
            except ActivityError as exc:
                cause = exc.cause
                assert isinstance(cause, ApplicationError)
                ended.append(Refusal(type=cause.type or "", message=cause.message))
        return ended


def forged(run_id: str) -> BatchRequest:
    """Two submitted orders to approve (`approve` has no inverse: the service would ask a human first)."""
    return BatchRequest(
        workflow_id=run_id,
        question="approve these",
        entity_type="PurchaseOrder",
        action_name="approve",
        targets=[ActionTarget(entity_id=po) for po in SUBMITTED],
        max_concurrent=2,
        response_topic="t",
        request_id="r",
        message_prefix="m",
    )


async def unchanged(g: Any) -> None:
    statuses = (
        await g.ro_query(
            "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": SUBMITTED}
        )
    ).result_set
    assert statuses == [["submitted"]]
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 0


def innermost(exc: BaseException) -> BaseException:
    while getattr(exc, "cause", None) is not None:
        exc = exc.cause  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize("parent", [AttackersOwnRun, LookalikeAgentRun], ids=["own-workflow", "agent-lookalike"])
async def test_a_batch_started_from_a_workflow_of_ones_own_changes_nothing(
    make_stack, demo_copy, unique: str, parent: type
) -> None:
    """The attacker's batch names its own run as the run (so its own history does start exactly this batch):
    what it lacks is an agent run of the service on the service's queue behind it."""
    graph_name, g = demo_copy
    assert len(SUBMITTED) == 2
    with ScriptedLLM(lambda body: (200, "ok")) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        own_queue, run_id = f"attacker-{unique}", f"attacker-run-{unique}"
        attack = Attack(queue=stack.config.queues.workflow, request=forged(run_id))
        async with Worker(stack.client, task_queue=own_queue, workflows=[parent]):
            with pytest.raises(WorkflowFailureError) as failed:
                await stack.client.execute_workflow(
                    WORKFLOW_NAME if parent is LookalikeAgentRun else "AttackersOwnRun",
                    attack,
                    id=run_id,
                    task_queue=own_queue,
                    result_type=BatchSummary,
                    execution_timeout=timedelta(seconds=120),
                )
    assert isinstance(failed.value.cause, ChildWorkflowError)
    refusal = innermost(failed.value)
    assert isinstance(refusal, ApplicationError) and refusal.type == "BatchWithoutApproval"
    assert "runs only as part of an agent run that approved it" in refusal.message
    assert f"on task queue {own_queue}, not by an agent run of this service" in refusal.message
    assert refusal.message.endswith("so nothing was changed.")
    await unchanged(g)


@pytest.mark.parametrize("tools_apart", [False, True], ids=["tools-on-the-workflow-queue", "tools-queue-apart"])
async def test_execute_action_scheduled_by_another_client_changes_nothing(
    make_stack, demo_copy, unique: str, tools_apart: bool
) -> None:
    """The attacker schedules the writes on the service's activity queue (the workflow's, shared by default; or
    the tools family's own), with a run id that is no run of the service: nothing runs them."""
    graph_name, g = demo_copy
    service: dict[str, Any] = {}
    if tools_apart:
        service["queues"] = TaskQueues(workflow=f"tgca-workflows-{unique}", tools=f"tgca-tools-{unique}")
    with ScriptedLLM(lambda body: (200, "ok")) as llm:
        stack = await make_stack(
            llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH), service=service
        )
        own_queue = f"attacker-{unique}"
        attack = Attack(queue=stack.config.queues.tools, request=forged(f"agent-forged-{uuid.uuid4().hex[:8]}"))
        async with Worker(stack.client, task_queue=own_queue, workflows=[AttackersDirectWrite]):
            ended = await stack.client.execute_workflow(
                "AttackersDirectWrite",
                attack,
                id=f"attacker-run-{unique}",
                task_queue=own_queue,
                result_type=list[Refusal | None],
                execution_timeout=timedelta(seconds=120),
            )
    await unchanged(g)
    assert all(e is not None for e in ended), ended
    for name, refusal in zip((Activities.EXECUTE_ACTION, Activities.EXECUTE_ACTIONS), ended, strict=True):
        assert refusal is not None
        if tools_apart:  # the tools family no longer hosts the writes at all
            assert refusal.type == "NotFoundError" and f"Activity function {name} " in refusal.message
        else:
            assert refusal.type == "ActionWithoutApproval"
            assert refusal.message == (
                f"{name} runs only as a local activity of an agent run that approved it; it "
                "was scheduled through Temporal, so nothing was changed."
            )
