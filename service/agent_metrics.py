"""The agent's Prometheus metrics (`agent_*`). Each step attempt is recorded by the tool activity that runs it
(tools/registry.py), as it ends: a run that climbs the retry ladder and then waits for a human shows its
retries at once. What needs the whole run (its time, its plan's size, whether retried steps recovered) is
recorded once per run by activities/audit_record.py."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from confidence.ladder import rung_for
from contracts.plan import ExecutionStep
from contracts.query_path import StepOutput
from contracts.records import RunMetrics
from service.defaults import PROCESSOR_ID
from service.trustgraph_metrics import TrustGraphAgentMetrics

FAST_BUCKETS = (0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1.0)
SECONDS_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# The bands an answer's stated (calibrated) confidence is read in: low up to 0.5, high above 0.8.
ANSWER_BUCKETS = (0.3, 0.5, 0.65, 0.8, 0.9, 1.0)


class AgentMetrics:
    def __init__(self, registry: CollectorRegistry = REGISTRY, processor: str = PROCESSOR_ID) -> None:
        self.confidence_score = Histogram(
            "agent_confidence_score",
            "Confidence scores of step results",
            ["function"],
            buckets=(0.1, 0.3, 0.5, 0.7, 0.9, 1.0),
            registry=registry,
        )
        self.confidence_failures = Counter(
            "agent_confidence_failures", "Step results below their confidence threshold", registry=registry
        )
        # rung: the retry ladder's approach (same, repair, adjusted, simplified; human: a retry a person asked for)
        self.retry_count = Counter(
            "agent_retry_count",
            "Retries on low confidence, by function and ladder rung",
            ["function", "rung"],
            registry=registry,
        )
        self.overrides_pending = Gauge(
            "agent_overrides_pending",
            "Runs waiting for a human's override decision now (counted by Temporal's "
            "visibility store; -1 while it cannot be read)",
            registry=registry,
        )
        self.retry_success_rate = Gauge(
            "agent_retry_success_rate", "Share of retried steps that reached their threshold", registry=registry
        )
        self.plan_execution_seconds = Histogram(
            "agent_plan_execution_seconds", "Total run time of a plan", buckets=SECONDS_BUCKETS, registry=registry
        )
        self.step_execution_seconds = Histogram(
            "agent_step_execution_seconds",
            "Execution time of one step attempt",
            ["function"],
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        self.plan_complexity = Histogram(
            "agent_plan_complexity", "Steps per plan", buckets=(1, 2, 3, 4, 5, 6, 8, 10, 15, 20), registry=registry
        )
        self.answer_confidence = Histogram(
            "agent_answer_confidence",
            "The stated confidence of each answer (a calibrated probability that it "
            "is right, where a calibrator is used)",
            buckets=ANSWER_BUCKETS,
            registry=registry,
        )
        self.audit_write_failures = Counter(
            "agent_audit_write_failures",
            "Audit writes that failed (the record is retried in the background)",
            registry=registry,
        )
        self.audit_pending = Gauge(
            "agent_audit_pending_records", "Audit records waiting for the sink to accept them", registry=registry
        )
        self.audit_dropped = Counter(
            "agent_audit_dropped_records", "Audit records dropped because the backlog was full", registry=registry
        )
        self.override_rejected = Counter(
            "agent_override_rejected",
            "Override decisions refused, by path (update, signal) and reason "
            "(unauthorized: no right to decide; invalid: a bad step or decision)",
            ["path", "reason"],
            registry=registry,
        )
        self.publish_seconds = Histogram(
            "tgca_worker_publish_seconds",
            "Publish one AgentResponse to the caller's response topic (the worker's publish local activity)",
            buckets=FAST_BUCKETS,
            registry=registry,
        )
        self.trustgraph = TrustGraphAgentMetrics(processor, registry)  # TrustGraph's names for the same events
        self._retried = 0
        self._recovered = 0

    def attempt(
        self, step: ExecutionStep, retry: int, seconds: float, output: StepOutput | None, rung: str = ""
    ) -> None:
        """One attempt at a step, as it ends; `output` None when the tool raised (a failed attempt, score 0)."""
        function = step.function
        score = output.confidence.score if output is not None else 0.0
        self.step_execution_seconds.labels(function=function).observe(seconds)
        self.confidence_score.labels(function=function).observe(score)
        if output is None or not output.success or score < step.confidence_threshold:
            self.confidence_failures.inc()
        if retry:
            # Runs started before attempts carried their rung: the ladder's rung for this retry number.
            self.retry_count.labels(function=function, rung=rung or rung_for(retry).value).inc()
        self.trustgraph.tool_call(function, seconds, failed=output is None or not output.success)

    def llm_call(self, seconds: float, model: str, in_tokens: int | None, out_tokens: int | None) -> None:
        """One call to the LLM (backends/llm.py MeteredChatModel)."""
        self.trustgraph.llm_call(seconds, model, in_tokens, out_tokens)

    def record(self, run: RunMetrics) -> None:
        self._retried += run.retried_steps
        self._recovered += run.retried_steps_recovered
        if self._retried:
            self.retry_success_rate.set(self._recovered / self._retried)
        self.plan_execution_seconds.observe(run.plan_seconds)
        if run.plan_steps:
            self.plan_complexity.observe(run.plan_steps)
        if run.answer_confidence is not None:
            self.answer_confidence.observe(run.answer_confidence)
        self.trustgraph.session(run.failed, run.step_attempts)
