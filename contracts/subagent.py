"""A sub-goal of TrustGraph's supervisor answered by this service, and the completion that returns its answer.

TrustGraph 2.11.1's orchestrator (trustgraph/agent/orchestrator/supervisor_pattern.py) fans a question out as
AgentRequests on its `next` topic, all under the parent request's `id`: pattern "react", no history, a fresh
session_id, and correlation_id, parent_session_id, subagent_goal and expected_siblings. Its aggregator lives in
the memory of the orchestrator that fanned out (aggregator.py). A sibling counts as done when an AgentRequest
reaches that orchestrator's request topic with the same correlation_id and a history step of type
"subagent-completion": its observation is the answer, kept under subagent_goal (service.py,
_handle_subagent_completion). When every expected sibling has reported, the orchestrator asks itself for the
synthesis and answers the caller. A sibling that never reports is never timed out (cleanup_stale is never
called), so the parent would never answer: every served sub-goal reports, failures included.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:  # contracts/wire.py carries SubagentReturn in EmitInput
    from contracts.wire import AgentRequest

SUBAGENT_COMPLETION = "subagent-completion"  # AgentStep.step_type of the completion (pattern_base.py)
FAILED_PREFIX = "This sub-goal could not be answered: "


def is_subgoal(request: AgentRequest) -> bool:
    """A supervisor's sub-goal as the orchestrator first sends it (its ReAct continuations carry a history)."""
    return bool(
        request.correlation_id and request.subagent_goal and request.expected_siblings > 0 and not request.history
    )


class SubagentReturn(BaseModel):
    """Where a served sub-goal's answer goes, and the fields of its request that the completion repeats."""

    topic: str  # the request topic of TrustGraph's agent (react_request_topic): where the aggregator listens
    question: str
    group: list[str] | None = None
    collection: str = "default"
    session_id: str = ""
    conversation_id: str = ""
    correlation_id: str
    parent_session_id: str = ""
    subagent_goal: str
    expected_siblings: int

    @classmethod
    def of(cls, request: AgentRequest, topic: str) -> SubagentReturn:
        return cls(
            topic=topic,
            question=request.question,
            group=request.group,
            collection=request.collection,
            session_id=request.session_id,
            conversation_id=request.conversation_id,
            correlation_id=request.correlation_id,
            parent_session_id=request.parent_session_id,
            subagent_goal=request.subagent_goal,
            expected_siblings=request.expected_siblings,
        )

    def run_key(self, request_id: str) -> str:
        """The request id this sub-goal's run is known by: every sibling travels under the parent's `id`, so
        the run gets one of its own (the same for a redelivery of the same sub-goal)."""
        own = self.session_id or hashlib.sha256(self.subagent_goal.encode()).hexdigest()[:16]
        return f"{request_id}:sub:{own}"

    def completion(self, answer: str) -> bytes:
        """The AgentRequest TrustGraph's sub-agent sends when it is done (PatternBase.emit_subagent_completion),
        every field written as TrustGraph's own encoder writes it."""
        step = {
            "thought": "Subagent completed",
            "action": "complete",
            "arguments": {},
            "observation": answer,
            "step_type": SUBAGENT_COMPLETION,
            "plan": [],
            "subagent_results": {},
        }
        return json.dumps(
            {
                "question": self.question,
                "state": "",
                "group": self.group,
                "history": [step],
                "collection": self.collection,
                "streaming": False,
                "session_id": self.session_id,
                "conversation_id": self.conversation_id,
                "pattern": "",
                "task_type": "",
                "framing": "",
                "correlation_id": self.correlation_id,
                "parent_session_id": self.parent_session_id,
                "subagent_goal": self.subagent_goal,
                "expected_siblings": self.expected_siblings,
            }
        ).encode()


def subgoal_fields(payload: bytes, topic: str) -> SubagentReturn | None:
    """A sub-goal's return read from a payload that is not a usable AgentRequest, as far as its fields can be read;
    None unless it carries what the aggregator needs (correlation_id, subagent_goal, expected_siblings) and no
    history (the sub-goal as the orchestrator first sends it)."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("history"):
        return None
    correlation, goal, siblings = data.get("correlation_id"), data.get("subagent_goal"), data.get("expected_siblings")
    if not (isinstance(correlation, str) and correlation and isinstance(goal, str) and goal):
        return None
    if not isinstance(siblings, int) or siblings <= 0:
        return None

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    group = data.get("group")
    return SubagentReturn(
        topic=topic,
        question=text("question") or goal,
        group=[str(g) for g in group] if isinstance(group, list) else None,
        collection=text("collection") or "default",
        session_id=text("session_id"),
        conversation_id=text("conversation_id"),
        correlation_id=correlation,
        parent_session_id=text("parent_session_id"),
        subagent_goal=goal,
        expected_siblings=siblings,
    )


def subgoal_run_request(request: AgentRequest) -> AgentRequest:
    """The request a sub-goal's run answers: not streamed (TrustGraph's sub-agents never stream: the answer
    goes to the aggregator whole) and not a turn of the parent's conversation (the supervisor's answer is)."""
    return request.model_copy(update={"streaming": False, "conversation_id": ""})
