"""The flows of TrustGraph's config (`processor:agent-manager`, one entry per flow, as its flow service writes
them on `tg-start-flow`): their agent topics and their services' topics (backends/trustgraph_config.py,
contracts/flow.py), and the service topics a call takes inside a run's flow (backends/trustgraph.py)."""

from __future__ import annotations

import json

import pytest

from backends.flow_scope import in_flow
from backends.trustgraph import TrustGraphServices
from backends.trustgraph_config import parse_flows
from contracts.topics import agent_subscription, pulsar_topic


def entry(flow: str) -> str:
    return json.dumps(
        {
            "topics": {
                "request": f"request:tg:agent:ws:{flow}",
                "response": f"response:tg:agent:ws:{flow}",
                "text-completion-request": f"request:tg:text-completion:ws:{flow}",
                "text-completion-response": f"response:tg:text-completion:ws:{flow}",
                "prompt-request": f"request:tg:prompt-rag:ws:{flow}",
                "prompt-response": f"response:tg:prompt-rag:ws:{flow}",
                "graph-rag-request": f"request:tg:graph-rag:ws:{flow}",
            },
            "parameters": {},
        }
    )


def test_a_flow_definition_gives_its_agent_topics_and_the_services_it_wires() -> None:
    flows = parse_flows("ws", {"b": entry("b"), "broken": json.dumps({"topics": {}}), "junk": "{"})
    assert sorted(flows) == ["b"]  # an entry without the agent's topics is left out, as is one that is not JSON
    b = flows["b"]
    assert (b.request_topic, b.response_topic) == (
        "non-persistent://tg/request/agent:ws:b",
        "non-persistent://tg/response/agent:ws:b",
    )
    assert b.services.services == {
        "text-completion": (
            "non-persistent://tg/request/text-completion:ws:b",
            "non-persistent://tg/response/text-completion:ws:b",
        ),
        "prompt": ("non-persistent://tg/request/prompt-rag:ws:b", "non-persistent://tg/response/prompt-rag:ws:b"),
    }
    # graph-rag has no response topic in this entry: its calls keep the worker's configured topics


def test_queue_ids_map_to_pulsar_topics_as_trustgraphs_backend_maps_them() -> None:
    assert pulsar_topic("flow:tg:triples-store:ws:b") == "persistent://tg/flow/triples-store:ws:b"
    assert pulsar_topic("persistent://tg/flow/x") == "persistent://tg/flow/x"
    with pytest.raises(ValueError):
        pulsar_topic("agent:ws:b")
    assert agent_subscription("ws", "b", "agent-manager") == "agent-manager--ws--b--request"


def test_a_call_inside_a_runs_flow_takes_that_flows_topics_and_outside_it_the_configured_ones() -> None:
    services = TrustGraphServices(rr=None, workspace="ws", flow="default")  # type: ignore[arg-type]
    b = parse_flows("ws", {"b": entry("b")})["b"].services
    with in_flow(b):
        assert services.route("prompt") == b.services["prompt"]
        assert services.route("graph-rag") == services.topics["graph-rag"]  # not wired by the flow
    assert services.route("prompt") == (
        "non-persistent://tg/request/prompt-rag:ws:default",
        "non-persistent://tg/response/prompt-rag:ws:default",
    )
