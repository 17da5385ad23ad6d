"""Names the parts agree on: workflows, activities, task queues, search attributes and workflow ids.

Every name here is recorded in workflow histories: renaming one breaks the replay of runs in flight."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, model_validator
from temporalio.common import SearchAttributeKey

WORKFLOW_NAME = "ConfidenceAgentWorkflow"
BATCH_WORKFLOW_NAME = "ActionBatchWorkflow"


class Handlers:
    """The workflows' signal, update and query names: callers send them and histories record them."""

    OVERRIDE = "override"  # signal to a run: a human's decision (the sender hears nothing back)
    SUBMIT_OVERRIDE = "submit_override"  # update: the same decision, validated first; its outcome comes back
    STATUS = "status"  # query: the run's phase, its steps and any pending override
    REMEMBER = "remember"  # signal to a ConversationWorkflow: one turn
    MEMORY = "memory"  # query: a conversation's memory


class Activities:
    """Activity type names, by family (the family's task queue hosts them)."""

    # workflows family: local activities of the workflow worker
    AGENT_SETTINGS = "agent_settings"
    EXECUTE_ACTION = "execute_action"
    EXECUTE_ACTIONS = "execute_actions"  # a group of a batch's entities, all at once
    RECALL_CONVERSATION = "recall_conversation"
    REMEMBER_TURN = "remember_turn"
    PUBLISH = "publish"  # the caller's messages, published from the worker
    CHECK_BATCH_PARENT = "check_batch_parent"  # a batch child's parent run started exactly it, after approval
    # workflows family, a regular activity (durable, off the caller's path): explain entities to TrustGraph's
    # triples store and librarian (workflows/explain_store.py)
    STORE_EXPLAIN = "store_explain"
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


class TaskQueues(BaseModel):
    """The task queue of each activity family. By default every family shares the workflow's queue, so one
    worker process hosting them all (`tg-confidence up`, the compose file) runs each activity eagerly: the
    SDK hands the task to itself in the reply to the workflow task instead of the server matching it to a
    poller (30-45 ms per task on the dev server, BENCHMARKS.md). Give a family a queue of its own to run it
    in separate processes and scale it out (docs/architecture.md). An empty name means the workflow's."""

    workflow: str = "tgca-workflows"
    planning: str = ""
    tools: str = ""
    synthesis: str = ""
    audit: str = ""

    @model_validator(mode="after")
    def _shared_by_default(self) -> TaskQueues:
        for family in FAMILY_QUEUES:
            if not getattr(self, family):
                setattr(self, family, self.workflow)
        return self

    def suffixed(self, suffix: str) -> TaskQueues:
        """Every queue with `-suffix` appended (tests and benches keep their tasks apart), shared ones still
        shared."""
        return TaskQueues(**{name: f"{value}-{suffix}" for name, value in self.model_dump().items()})


# The families whose queue may be their own or the workflow's.
FAMILY_QUEUES = ("planning", "tools", "synthesis", "audit")


SA_STATUS = SearchAttributeKey.for_keyword("TgcaStatus")


SA_CURRENT_STEP = SearchAttributeKey.for_keyword("TgcaCurrentStep")


SA_FINAL_CONFIDENCE = SearchAttributeKey.for_float("TgcaFinalConfidence")


SA_AWAITING_OVERRIDE = SearchAttributeKey.for_bool("TgcaAwaitingOverride")


SEARCH_ATTRIBUTES = {
    "TgcaStatus": "Keyword",
    "TgcaCurrentStep": "Keyword",
    "TgcaFinalConfidence": "Double",
    "TgcaAwaitingOverride": "Bool",
}


MAX_WORKFLOW_ID_CHARS = 200


def workflow_id_for(request_id: str) -> str:
    """Deterministic per request id, so a redelivered or duplicated message finds the existing run."""
    safe = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in request_id)
    if len(safe) > MAX_WORKFLOW_ID_CHARS or safe != request_id:
        safe = f"{safe[:64]}-{hashlib.sha256(request_id.encode()).hexdigest()[:16]}"
    return f"agent-{safe}"
