"""One run of ConfidenceAgentWorkflow: its settings, its input and result, and what `status` returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field

from contracts.flow import FlowTopics
from contracts.names import TaskQueues
from contracts.override import OverrideIdentity, OverrideRequest
from contracts.plan import ExecutionPlan, StepResult
from contracts.subagent import SubagentReturn
from contracts.tool_spec import ToolScope
from contracts.wire import AgentRequest, AgentResponse

DEFAULT_COLLECTION = "default"  # AgentRequest's own default: a request that names no collection


class AgentSettings(BaseModel):
    """The knobs one run executes with (built-in defaults)."""

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
    # How often a human may have one step run again (the `retry` decision): every attempt adds a tool call
    # and its output to the run's history. Then accept, skip or abort remain.
    max_human_retries: int = Field(default=3, ge=0, le=20)
    # Who may decide overrides, approvals and undo: names, Ed25519 public keys and roles. Empty: anyone who
    # can reach Temporal may decide (a development setup). Decisions are signed over a per-request
    # challenge; only public keys and signatures reach a history, and a signature approves one decision.
    override_keys: list[OverrideIdentity] = Field(default_factory=list)
    # Without override_keys, an action that changes data (or an MCP tool its server does not mark read-only)
    # is refused before any change unless this development flag is set: then anyone who can reach Temporal
    # or the request topic may start and approve it (`tg-confidence up --open-actions`).
    open_actions: bool = False
    # The run's requester (AgentRequest.user) may approve its own action or tool call.
    allow_self_approval: bool = False
    # Every action waits for a human's approval, whatever its size, confidence or how its targets were named.
    approve_every_action: bool = False
    search_attributes: bool = False  # upsert TgcaStatus & co. (they must be registered on the server)
    # A request with `streaming: true` gets its answer's checked sentences as the model writes them
    # (activities/answer_release.py); off, the answer is sent in chunks once it is written and checked.
    stream_answer_as_written: bool = True
    audit_enabled: bool = True
    include_raw_outputs: bool = False
    # Per-tool thresholds; a tool not named here uses its own default (tools/<tool>.py), else confidence_threshold.
    tool_thresholds: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(default_factory=dict)
    # The action path. Mutations are critical: a higher bar, a dry run, and human approval.
    router_enabled: bool = True  # classify QUERY / ACTION / ANSWER first (when the worker has actions)
    action_confidence_threshold: float = Field(default=0.9, ge=0.0, le=1.0)  # below it, a human approves
    action_approval_above: int = Field(default=5, ge=0)  # more targets than this need approval
    action_max_concurrent: int = Field(default=10, ge=1, le=500)
    action_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    action_max_attempts: int = Field(default=3, ge=1, le=10)  # retries are safe: executions are idempotent
    action_window: int = Field(default=500, ge=1, le=2000)  # entities per child workflow
    action_max_targets: int = Field(default=10_000, ge=1, le=100_000)
    # Entities per execution activity: 0 picks action_max_concurrent / 5 (at least 1), 1 is one activity per
    # entity. Fewer activities cost less bookkeeping per entity (workflows/action_batch.py).
    action_group_size: int = Field(default=0, ge=0, le=100)

    def under_policy_of(self, worker: AgentSettings) -> AgentSettings:
        """These settings with the worker's own approval and audit policy: a caller that starts a run with
        its own settings chooses how the run works, never who approves it or when (WORKER_POLICY)."""
        return self.model_copy(update={key: getattr(worker, key) for key in WORKER_POLICY})


# Who approves, what needs approval, how often a human may retry a step and whether it is recorded: always
# the worker's configuration.
WORKER_POLICY = (
    "override_enabled",
    "override_keys",
    "max_human_retries",
    "audit_enabled",
    "action_confidence_threshold",
    "action_approval_above",
    "action_max_targets",
    "open_actions",
    "allow_self_approval",
    "approve_every_action",
)


class RequestScope(BaseModel):
    """What one request's TrustGraph fields ask of its planner and tools (docs/trustgraph-contract.md), taken
    from the run's request by the workflow."""

    tools: ToolScope = Field(default_factory=ToolScope)  # `group` and `state`: which tools are offered
    # `collection`: the request's collection, where its explain triples are stored; "" (the request named none,
    # or "default"): the worker's `trustgraph_collection`. Graph-RAG searches its tool entry's collection instead
    # (tools/knowledge_query.py), as TrustGraph's agent does.
    collection: str = ""
    framing: str = ""  # `framing`: told to the planner, as TrustGraph's agent adds it to its prompt
    task_type: str = ""  # `task_type`: a task type of TrustGraph's `agent-task-type` config gives its framing

    @classmethod
    def of(cls, request: AgentRequest) -> RequestScope:
        collection = "" if request.collection == DEFAULT_COLLECTION else request.collection
        return cls(
            tools=ToolScope(groups=request.group, state=request.state),
            collection=collection,
            framing=request.framing,
            task_type=request.task_type,
        )


class AgentRunInput(BaseModel):
    request: AgentRequest
    request_id: str
    response_topic: str
    # None: the run uses the settings of the worker that executes it (its flags, env and YAML). Given: the
    # run uses them, except the approval and audit policy, which is the worker's (WORKER_POLICY).
    settings: AgentSettings | None = None
    queues: TaskQueues = Field(default_factory=TaskQueues)
    # The bridge forwards a failed run to the existing agent-manager: then the run stays silent on failure.
    fallback_on_failure: bool = False
    # Set for a sub-goal of TrustGraph's supervisor that this service answers: the run's last message (its
    # answer or its error) becomes the completion its aggregator waits for (contracts/subagent.py).
    subagent: SubagentReturn | None = None
    # The TrustGraph flow the request came in on (the bridge following TrustGraph's flows): its activities call
    # that flow's services. None: the worker's configured topics.
    flow: FlowTopics | None = None


class AgentRunResult(BaseModel):
    answer: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    plan: ExecutionPlan | None = None
    step_results: list[StepResult] = Field(default_factory=list)
    error: str | None = None
    needs_fallback: bool = False  # failed without telling the caller: the bridge forwards the request
    # The answer's evidence features (confidence/evidence.py) and the evidence-only score before
    # calibration: what `tg-confidence calibrate` and the benchmark read.
    evidence: dict[str, float] = Field(default_factory=dict)
    evidence_score: float | None = None
    # The messages that ended the caller's dialog, exactly as sent (delivery ids included): a caller whose copy
    # never arrived takes them from here (service/run_recovery.py). Empty when the run sent the caller nothing
    # to end on (a sub-goal reports to its supervisor; a run handed to the fallback agent).
    closing: list[AgentResponse] = Field(default_factory=list)


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
    # The message that asked the caller for the pending decision, exactly as sent: a caller that missed it
    # gets it from here (service/run_recovery.py).
    waiting_message: AgentResponse | None = None
    final_confidence: float | None = None
    # The most recent refused override signals (each clipped), and how many there were in all.
    rejected_overrides: list[str] = Field(default_factory=list)
    rejected_overrides_total: int = 0

    def step(self, step_id: str) -> StepStatus:
        return next(s for s in self.steps if s.step_id == step_id)
