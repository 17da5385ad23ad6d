"""Pydantic models shared by the workflow, the activities, the bridge and the CLI.

Plan models follow seed 001/004 section 2.3; AgentRequest/AgentResponse follow TrustGraph 2.11.1
(see shared/TRUSTGRAPH-CONTRACT.md). Everything here is pure data: safe inside the workflow sandbox.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# --------------------------------------------------------------------------------------------
# Confidence and plans (seed section 2.3)
# --------------------------------------------------------------------------------------------


class ConfidenceMetrics(BaseModel):
    score: float = Field(ge=0.0, le=1.0)
    reasoning: str = ""
    retry_count: int = Field(default=0, ge=0)


class ExecutionStep(BaseModel):
    id: str = Field(min_length=1, max_length=64)
    function: str = Field(min_length=1, max_length=64)
    arguments: dict[str, str] = Field(default_factory=dict)
    dependencies: list[str] = Field(default_factory=list)
    confidence_threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    timeout_ms: int = Field(default=30000, gt=0, le=3_600_000)


class PlanValidationError(ValueError):
    """A plan that cannot run: the message lists every problem found."""


def find_cycle(steps: list[ExecutionStep]) -> list[str] | None:
    """Return one dependency cycle as a list of step ids, or None when the graph is acyclic."""
    deps = {s.id: s.dependencies for s in steps}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in deps.get(node, []):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep in deps and state.get(dep) is None:
                cycle = visit(dep, path)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for step in steps:
        if state.get(step.id) is None:
            cycle = visit(step.id, [])
            if cycle:
                return cycle
    return None


class ExecutionPlan(BaseModel):
    id: str = Field(min_length=1)
    steps: list[ExecutionStep] = Field(min_length=1)
    context: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_graph(self) -> ExecutionPlan:
        problems: list[str] = []
        ids = [s.id for s in self.steps]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            problems.append(f"duplicate step ids: {', '.join(duplicates)}")
        known = set(ids)
        for step in self.steps:
            if step.id in step.dependencies:
                problems.append(f"step {step.id} depends on itself")
            missing = [d for d in step.dependencies if d not in known]
            if missing:
                problems.append(f"step {step.id} depends on unknown steps: {', '.join(missing)}")
        if not problems:
            cycle = find_cycle(self.steps)
            if cycle:
                problems.append(f"dependency cycle: {' -> '.join(cycle)}")
        if problems:
            raise PlanValidationError("; ".join(problems))
        return self

    def step(self, step_id: str) -> ExecutionStep:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)


class StepResult(BaseModel):
    step_id: str
    success: bool
    output: str = ""
    confidence: ConfidenceMetrics
    execution_time_ms: int = Field(default=0, ge=0)


# --------------------------------------------------------------------------------------------
# TrustGraph wire models (2.11.1 plus the legacy fields a drop-in must still read/write)
# --------------------------------------------------------------------------------------------


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="ignore")
    goal: str = ""
    tool_hint: str = ""
    depends_on: list[int] = Field(default_factory=list)
    status: str = ""
    result: str = ""


class AgentStep(BaseModel):
    model_config = ConfigDict(extra="ignore")
    thought: str = ""
    action: str = ""
    arguments: dict[str, str] = Field(default_factory=dict)
    observation: str = ""
    step_type: str = ""
    plan: list[PlanStep] = Field(default_factory=list)
    subagent_results: dict[str, str] = Field(default_factory=dict)


class AgentRequest(BaseModel):
    """TrustGraph AgentRequest. Unknown keys are ignored, missing keys take defaults (as TrustGraph's
    own decoder does); `plan` is the legacy (<= 1.3) field that carries request-level config."""

    model_config = ConfigDict(extra="ignore")
    question: str
    state: str = ""
    group: list[str] | None = None
    history: list[AgentStep] = Field(default_factory=list)
    collection: str = "default"
    streaming: bool = False
    session_id: str = ""
    conversation_id: str = ""
    pattern: str = ""
    task_type: str = ""
    framing: str = ""
    correlation_id: str = ""
    parent_session_id: str = ""
    subagent_goal: str = ""
    expected_siblings: int = 0
    plan: str = ""

    @field_validator(
        "state", "collection", "session_id", "conversation_id", "pattern", "task_type", "framing",
        "correlation_id", "parent_session_id", "subagent_goal", "plan", mode="before",
    )
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        # TrustGraph writes None as null; its dataclass defaults make that an empty string.
        return "" if value is None else value

    @field_validator("history", mode="before")
    @classmethod
    def _null_history(cls, value: object) -> object:
        return [] if value is None else value


class ErrorInfo(BaseModel):
    type: str
    message: str


MessageType = Literal["thought", "action", "observation", "answer", "explain", "error"]


class AgentResponse(BaseModel):
    message_type: MessageType
    content: str = ""
    end_of_message: bool = True
    end_of_dialog: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    message_id: str = ""
    error: ErrorInfo | None = None
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None


# --------------------------------------------------------------------------------------------
# Workflow input/output
# --------------------------------------------------------------------------------------------


class AgentSettings(BaseModel):
    """The knobs one run executes with (built-in defaults, seed 004 appendix A.2)."""

    confidence_threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    max_retries: int = Field(default=3, ge=0, le=10)
    retry_backoff_factor: float = Field(default=2.0, ge=1.0, le=10.0)
    max_retry_delay_s: float = Field(default=5.0, gt=0, le=300)
    step_timeout_ms: int = Field(default=30000, gt=0, le=3_600_000)
    planning_timeout_ms: int = Field(default=120000, gt=0, le=3_600_000)
    max_iterations: int = Field(default=15, ge=1, le=100)
    max_steps: int = Field(default=8, ge=1, le=50)
    max_context_size: int = Field(default=8192, ge=256, le=1_000_000)
    parallel_execution: bool = False
    max_parallel_steps: int = Field(default=4, ge=1, le=64)
    override_enabled: bool = True
    override_timeout_s: float = Field(default=600.0, gt=0, le=7 * 24 * 3600)
    # sha256 hex digests of the tokens that may override; empty = anyone who can reach Temporal may.
    # Only digests travel in workflow inputs, so no token is ever written to a workflow history.
    override_token_sha256: list[str] = Field(default_factory=list)
    search_attributes: bool = False  # upsert TgcaStatus & co. (they must be registered on the server)
    audit_enabled: bool = True
    include_raw_outputs: bool = False
    tool_thresholds: dict[str, float] = Field(
        default_factory=lambda: {"GraphQuery": 0.8, "TextCompletion": 0.7, "McpTool": 0.6}
    )
    # The action path (seed 002). Mutations are critical: a higher bar, a dry run, and human approval.
    router_enabled: bool = True  # classify QUERY / ACTION / ANSWER first (when the worker has actions)
    action_confidence_threshold: float = Field(default=0.9, ge=0.0, le=1.0)  # below it, a human approves
    action_approval_above: int = Field(default=5, ge=0)  # more targets than this need approval
    action_max_concurrent: int = Field(default=10, ge=1, le=500)
    action_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    action_max_attempts: int = Field(default=3, ge=1, le=10)  # retries are safe: executions are idempotent
    action_window: int = Field(default=500, ge=1, le=2000)  # entities per child workflow
    action_max_targets: int = Field(default=10_000, ge=1, le=100_000)
    action_local_activities: bool = True  # run each action as a local activity (no server round trip)

    def threshold_for(self, function: str) -> float:
        return self.tool_thresholds.get(function, self.confidence_threshold)


class TaskQueues(BaseModel):
    """One named task queue per activity family (seed 004 phase 2 maps onto these)."""

    workflow: str = "tgca-workflows"
    planning: str = "tgca-planning"
    tools: str = "tgca-tools"
    synthesis: str = "tgca-synthesis"
    audit: str = "tgca-audit"
    bridge: str = "tgca-bridge"


class AgentRunInput(BaseModel):
    request: AgentRequest
    request_id: str
    response_topic: str
    # None: the run uses the settings of the worker that executes it (its flags, env and YAML).
    settings: AgentSettings | None = None
    queues: TaskQueues = Field(default_factory=TaskQueues)
    # The bridge forwards a failed run to the existing agent-manager: then the run stays silent on failure.
    fallback_on_failure: bool = False


class AgentRunResult(BaseModel):
    answer: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    plan: ExecutionPlan | None = None
    step_results: list[StepResult] = Field(default_factory=list)
    error: str | None = None
    needs_fallback: bool = False  # failed without telling the caller: the bridge forwards the request
