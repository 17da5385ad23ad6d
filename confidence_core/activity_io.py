"""Inputs and outputs of every activity (pydantic, carried by Temporal's pydantic data converter)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from confidence_core.audit import AuditRecord
from confidence_core.models import AgentResponse, AgentSettings, ConfidenceMetrics, ExecutionPlan, ExecutionStep


class PlanningInput(BaseModel):
    question: str
    plan_id: str
    settings: AgentSettings


class PlanningOutput(BaseModel):
    plan: ExecutionPlan | None = None
    error: str | None = None
    attempts: int = 1


class StepInput(BaseModel):
    question: str
    step: ExecutionStep
    run_id: str = ""  # the workflow id: with the step and the entity, an action's idempotency key
    # Outputs of the step's dependencies only, keyed by step id (the memory manager's selection).
    context: dict[str, str] = Field(default_factory=dict)
    retry_count: int = 0


class StepOutput(BaseModel):
    success: bool
    output: str
    confidence: ConfidenceMetrics
    execution_time_ms: int = 0
    error: str | None = None


class SupportingResult(BaseModel):
    step_id: str
    function: str
    output: str
    score: float


class SynthesisInput(BaseModel):
    question: str
    results: list[SupportingResult]
    max_context_size: int = 8192


class SynthesisOutput(BaseModel):
    answer: str
    model: str | None = None
    in_tokens: int | None = None
    out_tokens: int | None = None


class EmitInput(BaseModel):
    """Messages for one caller, published in order."""

    topic: str
    request_id: str
    responses: list[AgentResponse]


class AdjustInput(BaseModel):
    """Ask the LLM for new arguments for a step whose result was weak (retry ladder rungs 2 and 3)."""

    question: str
    step: ExecutionStep
    rung: str  # "adjusted" | "simplified"
    last_output: str
    reasoning: str


class AdjustOutput(BaseModel):
    arguments: dict[str, str]


class StepTiming(BaseModel):
    function: str
    seconds: float


class RunMetrics(BaseModel):
    """One run's measurements, recorded once by the metrics activity (workflow code has no side effects)."""

    scores: list[tuple[str, float]] = Field(default_factory=list)  # (function, score) of every attempt
    below_threshold: int = 0  # attempts that failed their step's threshold
    retries: dict[str, int] = Field(default_factory=dict)  # function -> retries
    retried_steps: int = 0
    retried_steps_recovered: int = 0
    plan_seconds: float = 0.0
    step_timings: list[StepTiming] = Field(default_factory=list)
    plan_steps: int = 0


class RunRecord(BaseModel):
    """What a finished run leaves behind: its measurements and, when auditing is on, its audit record."""

    metrics: RunMetrics
    audit: AuditRecord | None = None
    include_raw_outputs: bool = False
