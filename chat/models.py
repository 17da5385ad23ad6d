"""The API's own request and response bodies (docs/http-api.md); the rest are the contracts' models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from contracts.override import Decision
from contracts.run import RunStatus

ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"


class ChatRequest(BaseModel):
    """Seed 002's chat request. Without a conversation id a new conversation starts; its id is the first event."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=8000)
    conversation_id: str | None = Field(default=None, pattern=ID_PATTERN)


class OverrideBody(BaseModel):
    """A human's decision on the step a run waits on (the caller is recorded as who decided)."""

    model_config = ConfigDict(extra="forbid")
    step_id: str = Field(min_length=1, max_length=64)
    decision: Decision
    arguments: dict[str, str] | None = None
    reason: str = Field(default="", max_length=2000)


class RunView(BaseModel):
    workflow_id: str
    execution: str  # Temporal's view: RUNNING, COMPLETED, FAILED, ...
    status: RunStatus
    temporal_ui: str = ""
