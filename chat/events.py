"""The chat stream's events, from the agent's messages: the shapes of seed 002's chat API
(`thinking`, `content_start`, `content`, `action_plan`, `action_progress`, `action_error`, `action_complete`,
`done`), plus `observation`, `error`, `override_request`, `override_resolved`, `run_state` and `confidence`.
docs/http-api.md lists every field. Pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actions.ontology import Ontology
from chat.action_changes import planned_changes
from chat.step_output import step_output
from contracts.action_path import parse_action_event
from contracts.override import OverrideRequest
from contracts.plan import StepResult
from contracts.redaction import sanitize
from contracts.run import RunStatus, StepStatus
from contracts.wire import AgentResponse


@dataclass
class StreamState:
    answering: bool = False  # content_start was sent
    ontology: Ontology | None = None  # to say what an action plan will change (None: the service has no actions)


def is_final(message: AgentResponse) -> bool:
    return message.end_of_dialog or message.error is not None or message.message_type == "error"


def events_of(message: AgentResponse, state: StreamState) -> list[dict[str, Any]]:
    kind = message.message_type
    if kind == "thought":
        return [{"type": "thinking", "content": message.content}]
    if kind == "observation":
        event = parse_action_event(message.content)
        if event is None:
            return [{"type": "observation", "content": message.content}]
        if event["type"] == "action_plan" and state.ontology is not None:
            event["plan"].update(planned_changes(event["plan"], state.ontology))
        return [event]
    if kind == "answer":
        events: list[dict[str, Any]] = []
        if message.content and not state.answering:
            state.answering = True
            events.append({"type": "content_start"})
        if message.content:
            events.append({"type": "content", "content": message.content})
        return events
    if kind == "error":
        return [{"type": "error", "content": message.error.message if message.error else message.content}]
    if kind == "explain":  # provenance triples for TrustGraph's clients: the chat shows its confidence event
        return []
    return [{"type": kind, "content": message.content}]


def override_event(workflow_id: str, pending: OverrideRequest) -> dict[str, Any]:
    return {
        "type": "override_request",
        "workflow_id": workflow_id,
        "step_id": pending.step_id,
        "function": pending.function,
        "score": pending.score,
        "threshold": pending.threshold,
        "reasoning": pending.reasoning,
        "choices": pending.choices,
        "arguments": pending.arguments,
        "timeout_s": pending.timeout_s,
        "role": pending.role.value,
    }


def planned_steps(status: RunStatus) -> list[dict[str, Any]]:
    """The plan's steps with their arguments and dependencies: the graph the page draws ([] before a plan, and
    on the action path, which has none)."""
    if status.plan is None:
        return []
    return [
        {
            "step_id": s.id,
            "function": s.function,
            "arguments": sanitize(s.arguments),
            "dependencies": s.dependencies,
            "threshold": s.confidence_threshold,
        }
        for s in status.plan.steps
    ]


def step_view(step: StepStatus) -> dict[str, Any]:
    return {
        "step_id": step.step_id,
        "function": step.function,
        "state": step.state.value,
        "score": step.score,
        "threshold": step.threshold,
        "reasoning": step.reasoning,
        "retries": step.retries,
    }


def run_state_event(status: RunStatus) -> dict[str, Any]:
    """The run as its `status` query has it now: phase, plan and each step's state, score and retries."""
    return {
        "type": "run_state",
        "phase": status.phase,
        "plan": planned_steps(status),
        "steps": [step_view(s) for s in status.steps],
    }


def confidence_event(status: RunStatus, results: list[StepResult] | None = None) -> dict[str, Any]:
    """The run's final confidence, its plan and every step; a step with a result carries its `output` (rows as a
    bounded table, or text: chat/step_output.py)."""
    outputs = {r.step_id: r.output for r in results or []}
    steps = []
    for step in status.steps:
        view = step_view(step)
        if step.step_id in outputs:
            view["output"] = step_output(outputs[step.step_id])
        steps.append(view)
    return {
        "type": "confidence",
        "score": status.final_confidence,
        "phase": status.phase,
        "steps": steps,
        "plan": planned_steps(status),
    }
