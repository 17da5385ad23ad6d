"""The query path's activity payloads: planning, one tool step, the repair of a weak step, synthesis."""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, Field

from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep
from contracts.run import AgentSettings


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
    # The run's workflow id: with the step and the entity, an action's idempotency key. ("run_id" in older
    # histories and in-flight tasks.)
    workflow_id: str = Field(default="", validation_alias=AliasChoices("workflow_id", "run_id"))
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


class AdjustInput(BaseModel):
    """Ask the LLM for new arguments for a step whose result was weak (retry ladder rungs 2 and 3)."""

    question: str
    step: ExecutionStep
    rung: str  # "adjusted" | "simplified"
    last_output: str
    reasoning: str


class AdjustOutput(BaseModel):
    arguments: dict[str, str]
