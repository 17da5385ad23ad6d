"""Every default address, port and name in one place: the service config, the embedded stack and the
CLI read them from here."""

from __future__ import annotations

HOST = "127.0.0.1"
TEMPORAL_PORT = 7233
TEMPORAL_UI_PORT = 8233
TEMPORAL_NAMESPACE = "default"
PULSAR_PORT = 6650
FALKORDB_PORT = 6379
LLM_PORT = 8080
METRICS_PORT = 8000  # Prometheus, as every TrustGraph processor
HTTP_PORT = 8765  # the chat API and UI
HTTP_HOST = HOST

TEMPORAL_ADDRESS = f"{HOST}:{TEMPORAL_PORT}"
TEMPORAL_UI_URL = f"http://{HOST}:{TEMPORAL_UI_PORT}"
PULSAR_URL = f"pulsar://{HOST}:{PULSAR_PORT}"
FALKORDB_URL = f"redis://{HOST}:{FALKORDB_PORT}"
LLM_BASE_URL = f"http://{HOST}:{LLM_PORT}/v1"
LLM_MODEL = "qwen2.5-coder-1.5b-instruct"
GRAPH_NAME = "procurement"
LOG_LEVEL = "INFO"
PROCESSOR_ID = "agent-manager"  # TrustGraph's id for the agent it replaces
