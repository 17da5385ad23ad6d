"""A Temporal client is not an approver: a run started with the caller's own settings keeps the worker's
approval policy, and an action batch started on its own changes nothing (real Temporal, FalkorDB)."""

from __future__ import annotations

import asyncio

from contracts.names import WORKFLOW_NAME
from contracts.override import Override
from contracts.run import AgentRunInput, AgentRunResult, AgentSettings
from contracts.wire import AgentRequest
from embedded import demo_graph
from tests.integration.test_action_path import DomainModel, pending_status
from tests.scripted_llm import ScriptedLLM

DRAFTS = [o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "draft"][:6]
PERMISSIVE = AgentSettings(action_approval_above=100_000, action_confidence_threshold=0.0, override_keys=[])


async def test_a_caller_that_brings_its_own_settings_still_waits_for_approval(
    make_stack, demo_copy, unique: str
) -> None:
    """Six orders are more than the worker lets run without a human (5). A client that starts the workflow
    with an approval limit of 100,000 and a zero action threshold still gets an approval request; aborted,
    nothing changes."""
    graph_name, g = demo_copy
    assert len(DRAFTS) == 6
    intent = {
        "entity_type": "PurchaseOrder",
        "action_name": "submit",
        "entity_ids": DRAFTS,
        "related_class": "",
        "related_name": "",
    }
    with ScriptedLLM(DomainModel(intent)) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        workflow_id = f"agent-own-settings-{unique}"
        handle = await stack.client.start_workflow(
            WORKFLOW_NAME,
            AgentRunInput(
                request=AgentRequest(question=f"Approve submitting {', '.join(DRAFTS)}"),
                request_id=f"own-settings-{unique}",
                response_topic=stack.config.response_topic,
                settings=PERMISSIVE,
                queues=stack.config.queues,
            ),
            id=workflow_id,
            task_queue=stack.config.queues.workflow,
            result_type=AgentRunResult,
        )
        status = await pending_status(stack, workflow_id, asyncio.create_task(handle.result()), wait_s=60)
        assert status.pending_override is not None
        assert "it touches 6 entities (more than 5)" in status.pending_override.reasoning
        await handle.execute_update("submit_override", Override(step_id="approve", decision="abort", by="ops"))
        await asyncio.wait_for(handle.result(), 120)
    statuses = (
        await g.ro_query("MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": DRAFTS})
    ).result_set
    assert statuses == [["draft"]]
