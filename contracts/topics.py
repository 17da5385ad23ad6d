"""TrustGraph queue naming: `CLASS:TOPICSPACE:TOPIC` -> `{persistence}://{topicspace}/{CLASS}/{TOPIC}`."""

from __future__ import annotations

import re

# A request queue's topic in TrustGraph's naming: its response queue is the same name in class `response`.
_REQUEST_TOPIC = re.compile(r"^(?:non-)?persistent://(?P<space>[^/]+)/request/(?P<name>.+)$")

_PERSISTENCE = {
    "flow": "persistent",
    "request": "non-persistent",
    "response": "non-persistent",
    "notify": "non-persistent",
}


def queue_topic(
    queue_class: str, service: str, workspace: str = "default", flow: str = "default", topicspace: str = "tg"
) -> str:
    """The Pulsar topic TrustGraph >= 2.4 uses for a service's queue of the given class."""
    persistence = _PERSISTENCE[queue_class]
    return f"{persistence}://{topicspace}/{queue_class}/{service}:{workspace}:{flow}"


def agent_request_topic(workspace: str = "default", flow: str = "default") -> str:
    return queue_topic("request", "agent", workspace, flow)


def agent_response_topic(workspace: str = "default", flow: str = "default") -> str:
    return queue_topic("response", "agent", workspace, flow)


def agent_subscription(workspace: str = "default", flow: str = "default", processor: str = "agent-manager") -> str:
    """The Shared subscription name TrustGraph's agent-manager uses (its ConsumerSpec `request`, named
    `<processor id>--<workspace>--<flow>--request`)."""
    return f"{processor}--{workspace}--{flow}--request"


def paired_response_topic(request_topic: str, otherwise: str) -> str:
    """The topic a caller of `request_topic` listens on for answers: `.../request/agent:ws:flow` is answered on
    `.../response/agent:ws:flow` (and the legacy `.../request/agent:flow` on `.../response/agent:flow`), as
    TrustGraph's own services answer; `otherwise` for a topic not named that way."""
    found = _REQUEST_TOPIC.match(re.sub(r"-partition-\d+$", "", request_topic))  # a partitioned topic's part
    if found is None:
        return otherwise
    return f"{_PERSISTENCE['response']}://{found['space']}/response/{found['name']}"


# The agent's response queue, as TrustGraph names it (`.../response/agent:<workspace>:<flow>`, or 1.x-2.3's
# `.../response/agent:<flow>`).
_AGENT_RESPONSE = re.compile(r"^(?:non-)?persistent://(?P<space>[^/]+)/response/agent:(?P<rest>.+)$")


def explainability_topic(response_topic: str) -> str:
    """Where TrustGraph's agent in the flow answering on `response_topic` writes its explain triples: its
    `explainability` queue, the flow's triples store (`flow:tg:triples-store:<workspace>:<flow>` in TrustGraph's
    flow blueprints); "" for a response topic not named as TrustGraph names the agent's."""
    found = _AGENT_RESPONSE.match(response_topic)
    if found is None:
        return ""
    return f"{_PERSISTENCE['flow']}://{found['space']}/flow/triples-store:{found['rest']}"


def librarian_topics(response_topic: str) -> tuple[str, str] | None:
    """TrustGraph's librarian of the workspace whose agent answers on `response_topic` (its request and response
    topics, `request:tg:librarian:<workspace>` as TrustGraph's librarian, its gateway and its agent's flow
    definitions name them); None for a response topic not named as TrustGraph 2.x names the agent's."""
    found = _AGENT_RESPONSE.match(response_topic)
    if found is None or ":" not in found["rest"]:
        return None
    workspace = found["rest"].partition(":")[0]
    return tuple(
        f"{_PERSISTENCE[kind]}://{found['space']}/{kind}/librarian:{workspace}"  # type: ignore[return-value]
        for kind in ("request", "response")
    )


def hears_explain(response_topic: str) -> bool:
    """Whether callers on this response topic get `explain` messages: all but those on 1.x's `agent:<flow>`
    queue, whose clients predate explainability (each such message would reach them with every field null)."""
    found = _AGENT_RESPONSE.match(response_topic)
    return found is None or ":" in found["rest"]


def is_persistent(topic: str) -> bool:
    return topic.startswith("persistent://")


def pulsar_topic(queue: str) -> str:
    """A TrustGraph queue id (`request:tg:agent:ws:flow`, as flow definitions name topics) as the Pulsar topic
    trustgraph-base's Pulsar backend maps it to; a name that already is a Pulsar topic is kept."""
    if "://" in queue:
        return queue
    parts = queue.split(":", 2)
    if len(parts) != 3 or parts[0] not in _PERSISTENCE:
        raise ValueError(f"{queue!r} is not a TrustGraph queue id (class:topicspace:topic)")
    queue_class, space, name = parts
    return f"{_PERSISTENCE[queue_class]}://{space}/{queue_class}/{name}"
