"""What a finished run leaves behind: its measurements and its audit record (one `record_run` activity)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AttemptAudit(BaseModel):
    rung: str
    arguments: dict[str, str]
    confidence_score: float
    reasoning: str
    output: str = ""


class StepAudit(BaseModel):
    step_id: str
    function: str
    start_time: str
    end_time: str
    confidence_score: float | None
    retry_count: int
    success: bool
    outcome: str
    attempts: list[AttemptAudit] = Field(default_factory=list)
    override: dict[str, str] | None = None


class AuditRecord(BaseModel):
    execution_id: str
    timestamp: str
    request: dict[str, Any]
    plan: dict[str, Any]
    execution: list[StepAudit]
    final_confidence: float | None
    total_duration_ms: int
    outcome: str
    notes: list[str] = Field(default_factory=list)
    # The answer's evidence features (or, for a run that ended without one, its finished steps'): with a
    # human's override decision, a label `tg-confidence calibrate` learns from.
    evidence: dict[str, float] = Field(default_factory=dict)


class RunMetrics(BaseModel):
    """What only the whole run can tell, recorded once by the run record activity (workflow code has no side
    effects). Each step attempt is counted by its tool activity as it ends (service/agent_metrics.py)."""

    retried_steps: int = 0
    retried_steps_recovered: int = 0
    plan_seconds: float = 0.0
    plan_steps: int = 0
    answer_confidence: float | None = None  # the stated confidence of the run's answer; None: none stated
    failed: bool = False  # the run ended in an error instead of an answer
    step_attempts: int = 0  # tool calls: every attempt at every step


class RunRecord(BaseModel):
    """What a finished run leaves behind: its measurements and, when auditing is on, its audit record."""

    metrics: RunMetrics
    audit: AuditRecord | None = None
    include_raw_outputs: bool = False
