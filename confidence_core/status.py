"""What the `status` query returns: the plan, each step's state and score, and any pending override."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from confidence_core.models import ExecutionPlan
from confidence_core.override import OverrideRequest


class StepState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    RETRYING = "retrying"
    AWAITING_OVERRIDE = "awaiting_override"
    SUCCEEDED = "succeeded"
    ACCEPTED_BY_OVERRIDE = "accepted_by_override"
    LOW_CONFIDENCE = "low_confidence"
    FAILED = "failed"
    SKIPPED = "skipped"


class StepStatus(BaseModel):
    step_id: str
    function: str
    state: StepState = StepState.PENDING
    score: float | None = None
    threshold: float
    retries: int = 0
    reasoning: str = ""


class RunStatus(BaseModel):
    phase: str = "planning"  # planning | executing | awaiting_override | synthesizing | completed | failed | aborted
    plan: ExecutionPlan | None = None
    steps: list[StepStatus] = Field(default_factory=list)
    pending_override: OverrideRequest | None = None
    final_confidence: float | None = None
    rejected_overrides: list[str] = Field(default_factory=list)

    def step(self, step_id: str) -> StepStatus:
        return next(s for s in self.steps if s.step_id == step_id)
