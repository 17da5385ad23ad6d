"""TrustGraph queue naming: `CLASS:TOPICSPACE:TOPIC` -> `{persistence}://{topicspace}/{CLASS}/{TOPIC}`."""

from __future__ import annotations

import hashlib

_PERSISTENCE = {"flow": "persistent", "request": "non-persistent", "response": "non-persistent",
                "notify": "non-persistent"}


def queue_topic(queue_class: str, service: str, workspace: str = "default", flow: str = "default",
                topicspace: str = "tg") -> str:
    """The Pulsar topic TrustGraph >= 2.4 uses for a service's queue of the given class."""
    persistence = _PERSISTENCE[queue_class]
    return f"{persistence}://{topicspace}/{queue_class}/{service}:{workspace}:{flow}"


def agent_request_topic(workspace: str = "default", flow: str = "default") -> str:
    return queue_topic("request", "agent", workspace, flow)


def agent_response_topic(workspace: str = "default", flow: str = "default") -> str:
    return queue_topic("response", "agent", workspace, flow)


def agent_subscription(workspace: str = "default", flow: str = "default") -> str:
    """The Shared subscription name TrustGraph's agent-manager uses."""
    return f"agent-manager--{workspace}--{flow}--request"


def is_persistent(topic: str) -> bool:
    return topic.startswith("persistent://")


MAX_WORKFLOW_ID_CHARS = 200


def workflow_id_for(request_id: str) -> str:
    """Deterministic per request id, so a redelivered or duplicated message finds the existing run."""
    safe = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in request_id)
    if len(safe) > MAX_WORKFLOW_ID_CHARS or safe != request_id:
        safe = f"{safe[:64]}-{hashlib.sha256(request_id.encode()).hexdigest()[:16]}"
    return f"agent-{safe}"
