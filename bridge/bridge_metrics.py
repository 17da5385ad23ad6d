"""The bridge's own cost per message, for operators and the benchmark (bench/bridge_throughput.py)."""

from __future__ import annotations

from prometheus_client import Histogram

from service.agent_metrics import FAST_BUCKETS

REQUEST_SECONDS = Histogram(
    "tgca_bridge_request_seconds",
    "Decode one AgentRequest, start (or find) its workflow and acknowledge it",
    buckets=FAST_BUCKETS,
)
EMIT_SECONDS = Histogram(
    "tgca_bridge_emit_seconds",
    "Publish one AgentResponse to the response topic: an error for a request the "
    "bridge could not start (a run's own messages are published by the workflow worker)",
    buckets=FAST_BUCKETS,
)
