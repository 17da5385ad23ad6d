"""TrustGraph queue naming: `CLASS:TOPICSPACE:TOPIC` -> `{persistence}://{topicspace}/{CLASS}/{TOPIC}`."""

from __future__ import annotations

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
