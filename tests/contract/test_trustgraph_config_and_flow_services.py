"""TrustGraph's own config service and flow service, driven by TrustGraph's own CLIs through its api-gateway
(tests/trustgraph_config_flow.py: which of them run as shipped, and the one part that does not), in front of this
service:

- a tool set with `tg-set-tool` is offered to the planner of the next question, and one deleted with
  `tg-delete-tool` no longer is: the config service's push reaches the worker, which reads the tools again;
- a flow started with `tg-start-flow` from a flow blueprint (`tg-put-flow-blueprint`) is served by the bridge on the
  topics the flow service wrote for it, with the services that blueprint wires; `tg-stop-flow` stops the serving.

The questions are asked as a TrustGraph user asks them, with `tg-invoke-agent` through the gateway, which routes
each flow by the interfaces the flow service wrote. TrustGraph's LLM and graph-rag services are scripted in its
own schema (scripted_trustgraph.py, and test_trustgraph_flows.py's FlowServices); the stand-ins those other tests
use for the config service are not running here."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from structlog.testing import capture_logs

from embedded.processes import free_port
from tests.contract.scripted_trustgraph import ANSWER, ScriptedTrustGraph
from tests.contract.test_trustgraph_flows import (  # noqa: F401 (bridge: a fixture)
    FLOWS,
    PROCESSOR,
    Bridge,
    FlowServices,
    bridge,
    request_topic,
)
from tests.trustgraph_config_flow import TrustGraphServices, running_services

QUESTION = "Where is Acme Industrial based?"
PLAN = json.dumps(
    {"steps": [{"id": "s1", "function": "KnowledgeQuery", "dependencies": [], "arguments": {"question": QUESTION}}]}
)
SHIPPING = [
    "--id",
    "shipping-summary",
    "--name",
    "shipping-summary",
    "--type",
    "prompt",
    "--template",
    "shipping",
    "--description",
    "Summarise a shipment",
]


@pytest_asyncio.fixture(scope="module")
async def trustgraph(pulsar_url: str, tmp_path_factory) -> AsyncIterator[TrustGraphServices]:  # type: ignore[no-untyped-def]
    async with running_services(pulsar_url, Path(tmp_path_factory.mktemp("trustgraph"))) as services:
        yield services


def blueprint(service_suffix: str = "") -> str:
    """A flow blueprint of TrustGraph 2.x's shape (its agent module, with the LLM service's own entry beside the
    agent's): the agent's interface and its `agent-manager` entry, each topic a template the flow service fills
    with the workspace and the flow id. `service_suffix` names the agent's services otherwise (`-large`:
    text-completion-large, ...), as a blueprint may wire any."""

    def queue(kind: str, service: str) -> str:
        return f"{kind}:tg:{service}:{{workspace}}:{{id}}"

    agent = {
        "request": queue("request", "agent"),
        "next": queue("request", "agent"),
        "response": queue("response", "agent"),
        "explainability": queue("flow", "triples-store"),
    }
    for spec, service in (
        ("text-completion", "text-completion"),
        ("prompt", "prompt-rag"),
        ("mcp-tool", "mcp-tool"),
        ("graph-rag", "graph-rag"),
    ):
        agent[f"{spec}-request"] = queue("request", service + service_suffix)
        agent[f"{spec}-response"] = queue("response", service + service_suffix)
    llm = {
        "request": queue("request", "text-completion" + service_suffix),
        "response": queue("response", "text-completion" + service_suffix),
    }
    return json.dumps(
        {
            "description": f"agent{service_suffix}",
            "parameters": {},
            "interfaces": {"agent": {"request": queue("request", "agent"), "response": queue("response", "agent")}},
            "flow": {f"{PROCESSOR}:{{id}}": {"topics": agent}, "text-completion:{id}": {"topics": llm}},
            "blueprint": {},
        }
    )


async def config_loaded(logs: list[dict[str, Any]], has_tool: bool, timeout_s: float = 60) -> None:
    """Wait until the worker has read the tools again, with or without `shipping-summary`."""
    for _ in range(int(timeout_s * 10)):
        if any(
            e["event"] == "trustgraph_config_loaded" and ("shipping-summary" in e["tools"]) == has_tool for e in logs
        ):
            return
        await asyncio.sleep(0.1)
    raise TimeoutError(f"the worker never loaded its tools {'with' if has_tool else 'without'} shipping-summary")


async def test_a_tool_set_with_tg_set_tool_is_offered_to_the_planner_and_one_deleted_is_not(
    make_stack, trustgraph: TrustGraphServices, unique: str
) -> None:
    workspace = f"test-{unique}"  # make_stack's
    await trustgraph.create_workspace(workspace)
    await trustgraph.cli("tg-put-flow-blueprint", "-w", workspace, "-n", "agent", "-c", blueprint())
    # The stack answers its workspace's `default` flow on fixed topics: starting the flow has the gateway route it.
    await trustgraph.start_flow(workspace, "agent", "default")
    with capture_logs() as logs:
        stack = await make_stack(
            f"http://127.0.0.1:{free_port()}/v1", tool_backend="trustgraph", override_enabled=False
        )
        services = ScriptedTrustGraph(stack.config.pulsar_url, workspace, PLAN)
        await services.start()
        try:
            ask = ["-w", workspace, "-f", "default", "-q", QUESTION]
            await config_loaded(logs, has_tool=False)
            before = await trustgraph.cli("tg-invoke-agent", *ask)
            await trustgraph.cli("tg-set-tool", "-w", workspace, *SHIPPING)
            await config_loaded(logs, has_tool=True)
            offered = await trustgraph.cli("tg-invoke-agent", *ask)
            del logs[:]  # the loads so far had it
            await trustgraph.cli("tg-delete-tool", "-w", workspace, "--id", "shipping-summary")
            await config_loaded(logs, has_tool=False)
            after = await trustgraph.cli("tg-invoke-agent", *ask)
        finally:
            await services.stop()
    assert all(out.startswith(ANSWER) for out in (before, offered, after)), (before, offered, after)
    plans = [r.system for r in services.seen["text-completion"] if r.schema]
    assert len(plans) == 3
    assert "shipping-summary" not in plans[0]
    assert "shipping-summary: Summarise a shipment" in plans[1]
    assert "shipping-summary" not in plans[2]


async def test_a_flow_started_with_tg_start_flow_is_served_by_the_bridge_until_tg_stop_flow(
    make_stack,
    trustgraph: TrustGraphServices,
    bridge: Bridge,  # noqa: F811
    unique: str,
) -> None:
    workspace = f"test-{unique}"  # make_stack's and the bridge's
    await trustgraph.create_workspace(workspace)
    await trustgraph.cli("tg-put-flow-blueprint", "-w", workspace, "-n", "agent", "-c", blueprint())
    await trustgraph.cli("tg-put-flow-blueprint", "-w", workspace, "-n", "agent-large", "-c", blueprint("-large"))
    stack = await make_stack(
        f"http://127.0.0.1:{free_port()}/v1",
        tool_backend="trustgraph",
        override_enabled=False,
        service={"llm_timeout_s": 60.0},
    )
    services = FlowServices(stack.config.pulsar_url, workspace)  # flow-b's services are the `-large` ones
    await services.start()
    flow_a, flow_b = FLOWS
    try:
        await trustgraph.start_flow(workspace, "agent", flow_a)
        await bridge.wait_state(request_topic(workspace, flow_a), "running")
        on_a = await trustgraph.cli("tg-invoke-agent", "-w", workspace, "-f", flow_a, "-q", f"{QUESTION} Q-A1")

        await trustgraph.start_flow(workspace, "agent-large", flow_b)
        await bridge.wait_state(request_topic(workspace, flow_b), "running")
        on_b = await trustgraph.cli("tg-invoke-agent", "-w", workspace, "-f", flow_b, "-q", f"{QUESTION} Q-B1")

        await trustgraph.stop_flow(workspace, flow_a)
        await bridge.wait_state(request_topic(workspace, flow_a), "stopped")
        listed = await trustgraph.cli("tg-show-flows", "-w", workspace)
        still_b = await trustgraph.cli("tg-invoke-agent", "-w", workspace, "-f", flow_b, "-q", f"{QUESTION} Q-B2")
    finally:
        await services.stop()
    assert "(flow-a)" in on_a and "(flow-b)" not in on_a, on_a
    assert "(flow-b)" in on_b and "(flow-a)" not in on_b, on_b
    assert "(flow-b)" in still_b, still_b
    assert flow_b in listed and flow_a not in listed, listed
    # Each run called the services its flow's blueprint wires, and no other flow's.
    for flow, other, tag in ((flow_a, flow_b, "Q-A1"), (flow_b, flow_a, "Q-B1")):
        assert services.calls[(flow, "graph-rag", tag)] == 1, services.calls
        assert services.calls[(flow, "text-completion", tag)] >= 2, services.calls
        assert services.calls[(other, "graph-rag", tag)] == 0 and services.calls[(other, "text-completion", tag)] == 0
