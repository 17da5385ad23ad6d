"""A conversation's memory: what each turn asked, answered and changed, as the next turn gets to see it.

Each turn is still one ConfidenceAgentWorkflow; the memory lives in one ConversationWorkflow per
conversation (id `conversation-<conversation id>`), which the turns read at their start and write at their
end. It is bounded: the last WINDOW turns in full (each trimmed), older ones as one line each, the whole
well under Temporal's payload warning size (docs/running.md, "Conversations and the chat UI").
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, Field

from contracts.llm_usage import LlmUsage

CONVERSATION_WORKFLOW_NAME = "ConversationWorkflow"
WINDOW = 6  # turns kept in full
EARLIER_LINES = 30  # older turns, one line each; the oldest are dropped beyond this
ANSWER_CHARS = 1500
RESULTS_CHARS = 1500
LINE_CHARS = 240
MEMORY_PROMPT_CHARS = 4000  # of the memory a prompt gets (the most recent part)
LISTED_OUTCOMES = 50  # per-entity outcomes kept per action; counts are always exact
IDLE_TTL_S = 24 * 3600.0  # a conversation nobody spoke in for this long ends (and its memory with it)
SIGNALS_BEFORE_CONTINUE = 200  # turns recorded before the workflow continues as new (bounded history)


class EntityResult(BaseModel):
    entity_id: str
    error: str = ""  # empty: the action succeeded on it


class ActionRecordSummary(BaseModel):
    """What one turn changed: the action, its counts, and (up to LISTED_OUTCOMES each) who succeeded and why
    others failed."""

    entity_type: str
    action_name: str
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    succeeded_ids: list[str] = Field(default_factory=list)
    failures: list[EntityResult] = Field(default_factory=list)
    executed: bool = True  # False: approval was refused or never came, nothing changed
    parameters: dict[str, Any] = Field(default_factory=dict)  # so "the same reason" reads in a later turn


class ConversationTurn(BaseModel):
    request_id: str  # one turn per request: a turn recorded twice (a retried activity) is kept once
    workflow_id: str = ""
    question: str
    standalone_question: str = ""  # the question as it was read in the conversation's context
    answer: str = ""
    confidence: float | None = None
    results: str = ""  # what the turn's tools returned (trimmed): the entities and figures it touched
    action: ActionRecordSummary | None = None
    at: str = ""


class ConversationMemory(BaseModel):
    conversation_id: str = ""
    turns: list[ConversationTurn] = Field(default_factory=list)  # the most recent, oldest first
    earlier: list[str] = Field(default_factory=list)  # one line per older turn, oldest first
    turn_count: int = 0  # every turn ever recorded, including those no longer kept
    source: str = "service"  # "service": kept by the service; "history": the request's own history field

    @property
    def empty(self) -> bool:
        return not self.turns and not self.earlier


class ConversationInput(BaseModel):
    conversation_id: str
    memory: ConversationMemory | None = None  # carried over when the workflow continues as new
    idle_ttl_s: float = IDLE_TTL_S


class RecallInput(BaseModel):
    conversation_id: str


class RememberInput(BaseModel):
    conversation_id: str
    turn: ConversationTurn
    queue: str  # the workflow task queue the conversation workflow runs on


class FollowUpInput(BaseModel):
    question: str
    conversation: str  # the memory, rendered (planning/conversation_memory.render)


class FollowUpOutput(BaseModel):
    question: str  # standalone: references replaced by what they refer to
    from_conversation: bool = False  # the conversation already holds the answer: no graph needed
    changed: bool = False
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)


def conversation_workflow_id(conversation_id: str) -> str:
    """Deterministic per conversation; ids with characters Temporal's UI would mangle are hashed."""
    safe = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in conversation_id)
    if len(safe) > 120 or safe != conversation_id:
        safe = f"{safe[:48]}-{hashlib.sha256(conversation_id.encode()).hexdigest()[:16]}"
    return f"conversation-{safe}"
