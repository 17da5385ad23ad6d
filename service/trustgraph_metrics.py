"""TrustGraph's own metric names, labels and buckets, exposed next to this service's `agent_*` ones, so a
dashboard or alert built for TrustGraph's agent-manager keeps working after the swap. They follow
trustgraph-base 2.x: every series carries the `processor` label (the processor id, `agent-manager` unless
`--id` says otherwise).

- the request consumer (the bridge): `tg_consumer_state`, `tg_consumer_request_duration_seconds`,
  `tg_consumer_processing_total{status}`, labelled with the request topic as `consumer`;
- every response published (worker and bridge): `tg_producer_messages_total`, the response topic as `producer`;
- the agent (worker): `tg_agent_session_total{outcome}`, `tg_agent_iteration_count`,
  `tg_agent_tool_invocation_total`, `tg_agent_tool_duration_seconds`, `tg_agent_tool_error_total`,
  `tg_agent_llm_duration_seconds` (TrustGraphAgentMetrics, owned by service/agent_metrics.py);
- token metering: `tg_metering_tokens_total{model, direction}`, counted here only for an LLM this service calls
  itself; with `tool_backend: trustgraph` TrustGraph's metering service already counts the text-completion
  responses, and counting them here too would double them;
- `tg_processor_info`: what the process is (service, version, workspace, flow, backend).
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Enum, Histogram, Info

from service.config import ServiceConfig
from service.flags import package_version

BUCKETS_STANDARD = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BUCKETS_LLM = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
ITERATION_BUCKETS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20)

CONSUMER_STATE = Enum("tg_consumer_state", "Consumer state", ["processor", "consumer"], states=["stopped", "running"])
CONSUMER_SECONDS = Histogram(
    "tg_consumer_request_duration_seconds",
    "Request latency (seconds)",
    ["processor", "consumer"],
    buckets=BUCKETS_STANDARD,
)
CONSUMER_PROCESSED = Counter("tg_consumer_processing_total", "Processing count", ["processor", "consumer", "status"])
PRODUCED = Counter("tg_producer_messages_total", "Output items produced", ["processor", "producer"])
PROCESSOR_INFO = Info("tg_processor", "Processor configuration", ["processor"])


class TrustGraphAgentMetrics:
    """The agent-manager's own series. A session is one run; an iteration is one tool call (a step attempt), as
    a ReAct iteration is one tool call; an LLM duration is one call this agent made to its LLM."""

    def __init__(self, processor: str, registry: CollectorRegistry = REGISTRY) -> None:
        self.processor = processor
        self.sessions = Counter(
            "tg_agent_session_total", "Agent sessions by outcome", ["processor", "outcome"], registry=registry
        )
        self.iterations = Histogram(
            "tg_agent_iteration_count",
            "Tool calls (step attempts) per session",
            ["processor"],
            buckets=ITERATION_BUCKETS,
            registry=registry,
        )
        self.tool_invocations = Counter(
            "tg_agent_tool_invocation_total", "Agent tool calls per tool name", ["processor", "tool"], registry=registry
        )
        self.tool_seconds = Histogram(
            "tg_agent_tool_duration_seconds",
            "Per-tool invocation latency (seconds)",
            ["processor", "tool"],
            buckets=BUCKETS_LLM,
            registry=registry,
        )
        self.tool_errors = Counter(
            "tg_agent_tool_error_total", "Tool invocation failures", ["processor", "tool"], registry=registry
        )
        self.llm_seconds = Histogram(
            "tg_agent_llm_duration_seconds",
            "LLM call latency (seconds)",
            ["processor"],
            buckets=BUCKETS_LLM,
            registry=registry,
        )
        self.tokens = Counter("tg_metering_tokens_total", "Token count", ["model", "direction"], registry=registry)
        for outcome in ("completed", "error"):  # both series exist from the start, as TrustGraph's do
            self.sessions.labels(processor=processor, outcome=outcome)

    def session(self, failed: bool, tool_calls: int) -> None:
        self.sessions.labels(processor=self.processor, outcome="error" if failed else "completed").inc()
        self.iterations.labels(processor=self.processor).observe(tool_calls)

    def tool_call(self, tool: str, seconds: float, failed: bool) -> None:
        self.tool_invocations.labels(processor=self.processor, tool=tool).inc()
        self.tool_seconds.labels(processor=self.processor, tool=tool).observe(seconds)
        if failed:
            self.tool_errors.labels(processor=self.processor, tool=tool).inc()

    def llm_call(self, seconds: float, model: str, in_tokens: int | None, out_tokens: int | None) -> None:
        """One LLM call; tokens None when they are not this process's to meter (or the server did not say)."""
        self.llm_seconds.labels(processor=self.processor).observe(seconds)
        if in_tokens is not None:
            self.tokens.labels(model=model, direction="input").inc(in_tokens)
        if out_tokens is not None:
            self.tokens.labels(model=model, direction="output").inc(out_tokens)


def describe_processor(processor: str, info: dict[str, str]) -> None:
    """tg_processor_info for this process: set once at start."""
    PROCESSOR_INFO.labels(processor=processor).info(info)


def process_info(config: ServiceConfig, role: str) -> dict[str, str]:
    """What tg_processor_info says of a worker or bridge: enough to tell processes apart on a dashboard."""
    return {
        "service": "tg-confidence-agent",
        "role": role,
        "version": package_version(),
        "workspace": config.workspace,
        "flow": config.flow,
        "tool_backend": config.tool_backend,
    }
