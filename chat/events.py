"""The chat stream's events, from the agent's messages: the shapes of seed 002's chat API
(`thinking`, `content_start`, `content`, `action_plan`, `action_progress`, `action_error`, `action_complete`,
`done`), plus `observation`, `error`, `override_request`, `override_resolved` and `confidence`.
docs/http-api.md lists every field. Pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.action_path import parse_action_event
from contracts.override import OverrideRequest
from contracts.run import RunStatus
from contracts.wire import AgentResponse


@dataclass
class StreamState:
    answering: bool = False  # content_start was sent


def is_final(message: AgentResponse) -> bool:
    return message.end_of_dialog or message.error is not None or message.message_type == "error"


def events_of(message: AgentResponse, state: StreamState) -> list[dict[str, Any]]:
    kind = message.message_type
    if kind == "thought":
        return [{"type": "thinking", "content": message.content}]
    if kind == "observation":
        return [parse_action_event(message.content) or {"type": "observation", "content": message.content}]
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
    return {"type": "override_request", "workflow_id": workflow_id, "step_id": pending.step_id,
            "function": pending.function, "score": pending.score, "threshold": pending.threshold,
            "reasoning": pending.reasoning, "choices": pending.choices, "arguments": pending.arguments,
            "timeout_s": pending.timeout_s, "role": pending.role.value}


def confidence_event(status: RunStatus) -> dict[str, Any]:
    return {"type": "confidence", "score": status.final_confidence, "phase": status.phase,
            "steps": [{"step_id": s.step_id, "function": s.function, "state": s.state.value, "score": s.score,
                       "threshold": s.threshold, "reasoning": s.reasoning} for s in status.steps]}
