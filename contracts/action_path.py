"""The action path's data: what the user asked to change, the entities it
targets, the batch the workflow runs, its per-entity outcomes and their summary, and the progress events
streamed to the caller.

Progress events travel as AgentResponse messages of type "observation" whose `content` is one JSON
object with a `type` field (so a TrustGraph client shows them as observations unchanged):

    {"type": "action_plan", "plan": {"entity_type", "action_name", "parameters": {name: value},
                                     "filters": [{"property", "op", "value"}], "target_count",
                                     "targets": [{"entity_id", "entity_name"}], "targets_listed",
                                     "related": {"class", "name", "filters"}  (when chosen through one),
                                     "left_out": [what the request states and the selection ignores]}}
    {"type": "action_progress", "completed", "total", "entity_id", "success"}
    {"type": "action_error", "entity_id", "error"}
    {"type": "action_complete", "results": {"total", "succeeded", "failed",
                                            "successes": [{"entity_id", "changes"}],
                                            "failures": [{"entity_id", "error"}], "listed"}}

Lists are capped at LISTED entries (counts are always exact); every change is in the action history.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from contracts.llm_usage import LlmUsage
from contracts.query_path import StepInput, StepOutput
from contracts.wire import AgentResponse, MessageType

LISTED = 500  # entities listed in one event or result; the rest are counted and in the action history


EVENT_TYPE: MessageType = "observation"


FILTER_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in")
_OP_TEXT = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "in": "in"}


class PropertyFilter(BaseModel):
    """A condition on a property of the targets' class ("total_amount gt 1000"). The op is checked with the
    value (actions/values.py), so a wrong one reads as a plain problem, not a parse error."""

    property: str
    op: str = "eq"
    value: Any = None


class ActionIntent(BaseModel):
    """What to change: an ACTION of the ontology with its parameters' values, and its targets, named by id
    or by a related entity ("all orders of supplier X" is related_class Supplier, related_name X; "orders
    of suppliers in Y" is related_class Supplier with related_filters country = Y), and narrowed by
    property filters (or chosen by filters alone)."""

    entity_type: str
    action_name: str
    entity_ids: list[str] = Field(default_factory=list)
    related_class: str = ""
    related_name: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
    filters: list[PropertyFilter] = Field(default_factory=list)
    related_filters: list[PropertyFilter] = Field(default_factory=list)  # on related_class's properties
    # The targets are those NOT related to it ("every approved order except those of Acme").
    related_excluded: bool = False


class ActionPlanningOutput(BaseModel):
    intent: ActionIntent | None = None
    irreversible: bool = False  # from the ontology's definition, never from the LLM
    error: str | None = None
    notes: list[str] = Field(default_factory=list)  # what the planner's answer lost or gained on the way
    # What the request states that the target selection does not use (a named supplier, an amount): the
    # targets may be more than was asked for, so their confidence is held far below approval.
    left_out: list[str] = Field(default_factory=list)
    # A question about what can be done ("which actions are available for X?"), answered from the action
    # definitions instead of a plan: nothing is looked up or changed.
    answer: str | None = None
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)


class ResolveTargetsInput(BaseModel):
    intent: ActionIntent
    max_targets: int
    left_out: list[str] = Field(default_factory=list)  # ActionPlanningOutput.left_out


class ActionTarget(BaseModel):
    entity_id: str
    entity_name: str = ""


class TargetsOutput(BaseModel):
    targets: list[ActionTarget] = Field(default_factory=list)
    confidence: float = 0.0  # how surely these are the entities the user meant
    reasoning: str = ""
    error: str | None = None


class DryRunInput(BaseModel):
    entity_type: str
    action_name: str
    entity_ids: list[str]


class EntityOutcome(BaseModel):
    entity_id: str
    success: bool
    changes: dict[str, Any] = Field(default_factory=dict)
    error: str = ""


class DryRunOutput(BaseModel):
    would_succeed: int
    failures: list[EntityOutcome] = Field(default_factory=list)  # the first LISTED, with their reasons
    would_fail: int = 0
    error: str | None = None


class BatchRequest(BaseModel):
    """One window of the batch: the parent runs it inline or as an ActionBatchWorkflow child."""

    workflow_id: str  # the parent workflow's: with step and entity, each action's idempotency key
    step_id: str = "execute"
    question: str
    entity_type: str
    action_name: str
    targets: list[ActionTarget]
    parameters: dict[str, Any] = Field(default_factory=dict)  # checked against the ontology when planned
    max_concurrent: int = 10
    timeout_s: float = 30.0
    max_attempts: int = 3
    group_size: int = 1  # entities per execution activity
    completed_before: int = 0  # progress counts continue across windows
    total: int = 0
    # Where the child streams its progress (the parent's caller).
    response_topic: str = ""
    request_id: str = ""
    message_prefix: str = ""


class ActionGroup(BaseModel):
    """Several entities of one batch, executed at once by one activity: one step input per entity, each with
    its own idempotency key, so a retried group applies nothing twice."""

    steps: list[StepInput]


class ActionGroupOutput(BaseModel):
    outputs: list[StepOutput]  # in the order of the group's steps


class BatchSummary(BaseModel):
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    successes: list[EntityOutcome] = Field(default_factory=list)
    failures: list[EntityOutcome] = Field(default_factory=list)

    def add(self, outcome: EntityOutcome) -> None:
        self.total += 1
        if outcome.success:
            self.succeeded += 1
            if len(self.successes) < LISTED:
                self.successes.append(outcome)
        else:
            self.failed += 1
            if len(self.failures) < LISTED:
                self.failures.append(outcome)

    def merge(self, other: BatchSummary) -> None:
        self.total += other.total
        self.succeeded += other.succeeded
        self.failed += other.failed
        self.successes.extend(other.successes[: max(0, LISTED - len(self.successes))])
        self.failures.extend(other.failures[: max(0, LISTED - len(self.failures))])

    def event(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "successes": [{"entity_id": o.entity_id, "changes": o.changes} for o in self.successes],
            "failures": [{"entity_id": o.entity_id, "error": o.error} for o in self.failures],
            "listed": LISTED,
        }


ACTION_EVENTS = {"action_plan", "action_progress", "action_error", "action_complete"}


def parse_action_event(content: str) -> dict[str, Any] | None:
    """The progress event an observation's `content` carries, or None when it carries none."""
    if not content.startswith('{"type": "action_'):
        return None
    try:
        event = json.loads(content)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and event.get("type") in ACTION_EVENTS else None


def event_message(event: dict[str, Any]) -> AgentResponse:
    return AgentResponse(message_type=EVENT_TYPE, content=json.dumps(event, default=str), end_of_message=True)


def plan_event(intent: ActionIntent, targets: list[ActionTarget], left_out: list[str] | None = None) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "entity_type": intent.entity_type,
        "action_name": intent.action_name,
        "parameters": intent.parameters,
        "filters": [f.model_dump() for f in intent.filters],
        "target_count": len(targets),
        "targets": [t.model_dump() for t in targets[:LISTED]],
        "targets_listed": LISTED,
    }
    if intent.related_class:
        plan["related"] = {
            "class": intent.related_class,
            "name": intent.related_name,
            "filters": [f.model_dump() for f in intent.related_filters],
        }
        if intent.related_excluded:
            plan["related"]["excluded"] = True
    if left_out:
        plan["left_out"] = left_out
    return {"type": "action_plan", "plan": plan}


def parameters_text(parameters: dict[str, Any]) -> str:
    """`reason="supplier dispute", due_date="2025-03-01"` (values as JSON, so text reads as text)."""
    return ", ".join(f"{name}={json.dumps(value, default=str)}" for name, value in parameters.items())


def filters_text(filters: list[dict[str, Any]] | list[PropertyFilter]) -> str:
    """`status = "approved" and total_amount > 1000.0`: the filters as plain conditions."""
    rows = [f.model_dump() if isinstance(f, PropertyFilter) else f for f in filters]
    return " and ".join(
        f"{r['property']} {_OP_TEXT.get(r['op'], r['op'])} {json.dumps(r['value'], default=str)}" for r in rows
    )


def related_text(
    class_name: str, name: str, filters: list[dict[str, Any]] | list[PropertyFilter], excluded: bool = False
) -> str:
    """`Supplier 'Northwind Traders'`, `Supplier with country = "Germany"`, `no Supplier 'Acme'`: the related
    entity the targets were chosen through, as the approval request and the plan line write it."""
    text = " ".join(
        filter(None, [class_name, repr(name) if name else "", f"with {filters_text(filters)}" if filters else ""])
    )
    return f"no {text}" if excluded else text


def progress_event(completed: int, total: int, outcome: EntityOutcome) -> dict[str, Any]:
    return {
        "type": "action_progress",
        "completed": completed,
        "total": total,
        "entity_id": outcome.entity_id,
        "success": outcome.success,
    }


def error_event(outcome: EntityOutcome) -> dict[str, Any]:
    return {"type": "action_error", "entity_id": outcome.entity_id, "error": outcome.error}


def complete_event(summary: BatchSummary) -> dict[str, Any]:
    return {"type": "action_complete", "results": summary.event()}


def summary_text(entity_type: str, action_name: str, summary: BatchSummary) -> str:
    """The final answer: counts, then every listed failure with its reason."""
    lines = [
        f"{action_name} on {summary.total} {entity_type} entit{'y' if summary.total == 1 else 'ies'}: "
        f"{summary.succeeded} succeeded, {summary.failed} failed."
    ]
    lines += [f"- {o.entity_id}: {o.error}" for o in summary.failures]
    if summary.failed > len(summary.failures):
        lines.append(f"- ... and {summary.failed - len(summary.failures)} more failures (see the action history)")
    return "\n".join(lines)


def windows(targets: list[ActionTarget], size: int) -> list[list[ActionTarget]]:
    return [targets[i : i + size] for i in range(0, len(targets), size)]
