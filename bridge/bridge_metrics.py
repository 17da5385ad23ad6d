"""The bridge's own cost per message, for operators and the benchmark (bench/bridge_throughput.py)."""

from __future__ import annotations

from prometheus_client import Histogram

FAST_BUCKETS = (0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1.0)

REQUEST_SECONDS = Histogram(
    "tgca_bridge_request_seconds", "Decode one AgentRequest, start (or find) its workflow and acknowledge it",
    buckets=FAST_BUCKETS)
EMIT_SECONDS = Histogram(
    "tgca_bridge_emit_seconds", "Publish one AgentResponse to the response topic (the emit activity's work)",
    buckets=FAST_BUCKETS)
