"""Names the parts agree on: workflows, activities, task queues, search attributes and workflow ids.

Every name here is recorded in workflow histories: renaming one breaks the replay of runs in flight."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel
from temporalio.common import SearchAttributeKey

WORKFLOW_NAME = "ConfidenceAgentWorkflow"
BATCH_WORKFLOW_NAME = "ActionBatchWorkflow"
# Patch id (workflow.patched) of runs whose messages the worker publishes itself.
WORKER_PUBLISH = "worker-publish"



class Activities:
    """Activity type names, by family (the family's task queue hosts them)."""

    # workflows family: local activities of the workflow worker
    AGENT_SETTINGS = "agent_settings"
    EXECUTE_ACTION = "execute_action"
    RECALL_CONVERSATION = "recall_conversation"
    REMEMBER_TURN = "remember_turn"
    PUBLISH = "publish"  # the caller's messages, published from the worker
    # planning family
    ROUTE = "route"
    PLAN = "plan"
    ADJUST_STEP = "adjust_step"
    PLAN_ACTION = "plan_action"
    READ_FOLLOW_UP = "read_follow_up"
    # tools family (besides one activity per tool, named as the tool)
    RESOLVE_ACTION_TARGETS = "resolve_action_targets"
    VALIDATE_ACTION_BATCH = "validate_action_batch"
    # synthesis family
    SYNTHESIZE = "synthesize"
    ANSWER_DIRECTLY = "answer_directly"
    ANSWER_FROM_CONVERSATION = "answer_from_conversation"
    # audit family
    RECORD_RUN = "record_run"
    # bridge family: the caller's messages, for runs started before `publish` (kept for their replay)
    EMIT = "emit"


class TaskQueues(BaseModel):
    """One named task queue per activity family (docs/architecture.md: scaling a family out)."""

    workflow: str = "tgca-workflows"
    planning: str = "tgca-planning"
    tools: str = "tgca-tools"
    synthesis: str = "tgca-synthesis"
    audit: str = "tgca-audit"
    bridge: str = "tgca-bridge"


SA_STATUS = SearchAttributeKey.for_keyword("TgcaStatus")


SA_CURRENT_STEP = SearchAttributeKey.for_keyword("TgcaCurrentStep")


SA_FINAL_CONFIDENCE = SearchAttributeKey.for_float("TgcaFinalConfidence")


SA_AWAITING_OVERRIDE = SearchAttributeKey.for_bool("TgcaAwaitingOverride")


SEARCH_ATTRIBUTES = {"TgcaStatus": "Keyword", "TgcaCurrentStep": "Keyword", "TgcaFinalConfidence": "Double",
                     "TgcaAwaitingOverride": "Bool"}


MAX_WORKFLOW_ID_CHARS = 200


def workflow_id_for(request_id: str) -> str:
    """Deterministic per request id, so a redelivered or duplicated message finds the existing run."""
    safe = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in request_id)
    if len(safe) > MAX_WORKFLOW_ID_CHARS or safe != request_id:
        safe = f"{safe[:64]}-{hashlib.sha256(request_id.encode()).hexdigest()[:16]}"
    return f"agent-{safe}"
