"""Flows started and stopped in TrustGraph (tg-start-flow / tg-stop-flow) are served and dropped by the running
bridge process, as TrustGraph's agent-manager serves them: the config service's `processor:agent-manager`
entries list the flows with their topics, and each push says they changed. A request asked on a flow is answered
on that flow's response topic, and its run calls that flow's own services; a flow removed from the config is no
longer consumed, while a run already going on it still answers.

The config service is the stand-in of test_trustgraph_config.py (TrustGraph's own schema classes and queues);
the flows' text-completion and graph-rag services are scripted here in TrustGraph's schema (as in
bench/trustgraph_services.py); the worker runs in TrustGraph mode in this process, the bridge as its own process."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pulsar
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from trustgraph.base.serialization import dataclass_to_dict, dict_to_dataclass
from trustgraph.schema import GraphRagQuery, GraphRagResponse, TextCompletionRequest, TextCompletionResponse
from trustgraph.schema.retrieval import Source

from cli.ask import ask
from contracts.names import TaskQueues, workflow_id_for
from contracts.topics import pulsar_topic
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import encode_request
from embedded.processes import ManagedProcess, free_port
from service.connections import pulsar_client
from tests.contract.test_trustgraph_config import ConfigService, config_service  # noqa: F401 (a fixture)

PROCESSOR = "agent-manager"
FLOWS = ("flow-a", "flow-b")
TAGS = ("Q-A1", "Q-A2", "Q-B1", "Q-B2", "Q-HOLD")  # each question's own; Q-HOLD's graph-rag answer waits for the test


def tag_of(text: str) -> str:
    return next((t for t in TAGS if t in text), "other")


def plan(tag: str) -> str:
    """One KnowledgeQuery step asking about the question's tag: each question's graph-rag call is its own
    (never answered from the tool-result cache) and says which question it is for."""
    return json.dumps(
        {
            "steps": [
                {
                    "id": "s1",
                    "function": "KnowledgeQuery",
                    "dependencies": [],
                    "arguments": {"question": f"Where is Acme Industrial based ({tag})?"},
                }
            ]
        }
    )


def queue(kind: str, service: str, workspace: str, flow: str) -> str:
    return f"{kind}:tg:{service}:{workspace}:{flow}"


def service_queue(service: str, flow: str) -> str:
    """The queue a flow's blueprint wires the agent's `service` to: flow-b's are named otherwise than the
    convention (a blueprint may wire any queue), so only a run that reads the definition finds them."""
    return f"{service}-large" if flow == "flow-b" else service


def definition(workspace: str, flow: str) -> dict[str, Any]:
    """The agent's entry of a flow, as TrustGraph's flow service writes it under processor:agent-manager when
    `tg-start-flow` starts the flow (queue ids, not Pulsar topics; its prompt is the RAG prompt service's)."""
    topics = {
        "request": queue("request", "agent", workspace, flow),
        "next": queue("request", "agent", workspace, flow),
        "response": queue("response", "agent", workspace, flow),
    }
    for spec, service in (
        ("text-completion", "text-completion"),
        ("graph-rag", "graph-rag"),
        ("prompt", "prompt-rag"),
        ("mcp-tool", "mcp-tool"),
    ):
        topics[f"{spec}-request"] = queue("request", service_queue(service, flow), workspace, flow)
        topics[f"{spec}-response"] = queue("response", service_queue(service, flow), workspace, flow)
    return {"topics": topics, "parameters": {}}


class FlowServices:
    """Each flow's text-completion and graph-rag, answering in TrustGraph's schema and noting, per flow, the
    question each request was for (its text names it)."""

    def __init__(self, pulsar_url: str, workspace: str) -> None:
        self.client = pulsar_client(pulsar_url)
        self.workspace = workspace
        self.calls: Counter[tuple[str, str, str]] = Counter()  # (flow, service, question tag)
        self.held = asyncio.Event()  # Q-HOLD's graph-rag call arrived; it is answered once `release` is set
        self.release = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for flow in FLOWS:
            for service, schema, handler in (
                ("text-completion", TextCompletionRequest, self._completion),
                ("graph-rag", GraphRagQuery, self._graph_rag),
            ):
                consumer = await self.client.subscribe(
                    pulsar_topic(queue("request", service_queue(service, flow), self.workspace, flow)),
                    f"{service}-svc",
                    consumer_type=pulsar.ConsumerType.Shared,
                )
                producer = await self.client.create_producer(
                    pulsar_topic(queue("response", service_queue(service, flow), self.workspace, flow)),
                    batching_enabled=False,
                )
                self._tasks.append(asyncio.create_task(self._serve(consumer, producer, schema, handler, flow)))

    async def _serve(self, consumer: Any, producer: Any, schema: type, handler: Any, flow: str) -> None:
        async def answer(message: Any) -> None:
            for response in await handler(dict_to_dataclass(json.loads(message.data()), schema), flow):
                await producer.send(
                    json.dumps(dataclass_to_dict(response)).encode(), properties={"id": message.properties()["id"]}
                )

        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            self._tasks.append(asyncio.create_task(answer(message)))

    async def _completion(self, request: TextCompletionRequest, flow: str) -> list[Any]:
        tag = tag_of(request.prompt)
        self.calls[(flow, "text-completion", tag)] += 1
        text = plan(tag) if request.schema else f"Acme Industrial is based in Mexico ({flow})."
        return [TextCompletionResponse(response=text, end_of_stream=True, in_token=5, out_token=7, model=flow)]

    async def _graph_rag(self, request: GraphRagQuery, flow: str) -> list[Any]:
        tag = tag_of(request.query)
        self.calls[(flow, "graph-rag", tag)] += 1
        if tag == "Q-HOLD":
            self.held.set()
            await self.release.wait()
        # As TrustGraph's graph-rag answers: a provenance (explain) message, then the text with its sources.
        return [
            GraphRagResponse(
                message_type="explain",
                explain_id=f"urn:trustgraph:question:{uuid.uuid4()}",
                explain_graph="urn:graph:retrieval",
            ),
            GraphRagResponse(
                message_type="chunk",
                response=f"Acme Industrial is based in Mexico ({flow}).",
                end_of_stream=True,
                end_of_session=True,
                sources=[Source(uri="urn:doc:suppliers", title=f"Supplier register ({flow})")],
            ),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.client.close()


async def consumer_states(port: int) -> dict[str, str]:
    """The bridge's `tg_consumer_state` per consumed topic, as an operator's Prometheus reads it."""
    async with httpx.AsyncClient() as http:
        text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    states: dict[str, str] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "tg_consumer_state":
            for sample in family.samples:
                if sample.value == 1.0:
                    states[sample.labels["consumer"]] = sample.labels["tg_consumer_state"]
    return states


class Bridge:
    def __init__(self, process: ManagedProcess, metrics_port: int) -> None:
        self.process = process
        self.metrics_port = metrics_port

    async def wait_state(self, topic: str, state: str) -> None:
        for _ in range(600):
            try:
                if (await consumer_states(self.metrics_port)).get(topic) == state:
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            await asyncio.sleep(0.1)
        raise AssertionError(f"the bridge never reported {topic} {state}: {self.process.log_tail(40)}")


@pytest_asyncio.fixture
async def bridge(
    temporal_env: WorkflowEnvironment, pulsar_url: str, unique: str, tmp_path: Path
) -> AsyncIterator[Bridge]:
    """`tg-confidence-bridge` following TrustGraph's flows, on this test's workspace and task queues."""
    port = free_port()
    queues = {
        f"TGCA_QUEUES__{name.upper()}": value for name, value in TaskQueues().suffixed(unique).model_dump().items()
    }
    env = {
        "TGCA_TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "TGCA_PULSAR_URL": pulsar_url,
        "TGCA_WORKSPACE": f"test-{unique}",
        "TGCA_TRUSTGRAPH_FLOWS": "true",
        "TGCA_METRICS_PORT": str(port),
        "TGCA_LOG_FORMAT": "json",
        **queues,
    }
    process = ManagedProcess("bridge", [sys.executable, "-m", "bridge"], tmp_path / "bridge.log", env=env)
    process.start()
    try:
        yield Bridge(process, port)
    finally:
        process.stop()


async def asked(pulsar_url: str, workspace: str, flow: str, question: str, **fields: Any) -> list[AgentResponse]:
    return [
        m
        async for m in ask(
            pulsar_url,
            AgentRequest(question=question, **fields),
            request_topic=pulsar_topic(queue("request", "agent", workspace, flow)),
            response_topic=pulsar_topic(queue("response", "agent", workspace, flow)),
            timeout_s=90,
        )
    ]


def request_topic(workspace: str, flow: str) -> str:
    return pulsar_topic(queue("request", "agent", workspace, flow))


async def test_flows_started_and_stopped_in_trustgraph_are_served_and_dropped_without_a_restart(
    make_stack,
    config_service: ConfigService,  # noqa: F811
    bridge: Bridge,
    temporal_env: WorkflowEnvironment,
    unique: str,
) -> None:
    workspace = f"test-{unique}"
    stack = await make_stack(
        f"http://127.0.0.1:{free_port()}/v1",
        tool_backend="trustgraph",
        override_enabled=False,
        service={"llm_timeout_s": 60.0},
    )
    url = stack.config.pulsar_url
    services = FlowServices(url, workspace)
    await services.start()
    flows = {flow: definition(workspace, flow) for flow in FLOWS}
    key = f"processor:{PROCESSOR}"
    try:
        # tg-start-flow flow-a: the bridge starts consuming its request topic and answers on its response topic.
        await config_service.put(workspace, key, {"flow-a": flows["flow-a"]})
        await bridge.wait_state(request_topic(workspace, "flow-a"), "running")
        on_a = await asked(url, workspace, "flow-a", "Where is Acme Industrial based? Q-A1")
        assert on_a[-1].message_type == "answer", [m.content for m in on_a]
        assert "(flow-a)" in on_a[-1].content

        # tg-start-flow flow-b: served next to flow-a; its run calls flow-b's services only.
        await config_service.put(workspace, key, flows)
        await bridge.wait_state(request_topic(workspace, "flow-b"), "running")
        on_b = await asked(url, workspace, "flow-b", "Where is Acme Industrial based? Q-B1")
        assert on_b[-1].message_type == "answer", [m.content for m in on_b]
        assert "(flow-b)" in on_b[-1].content and "(flow-a)" not in on_b[-1].content
        # Each run called its own flow's services only: the planner and synthesis, and the graph-rag step.
        for asked_on, other_flow, tag in (("flow-a", "flow-b", "Q-A1"), ("flow-b", "flow-a", "Q-B1")):
            assert services.calls[(asked_on, "text-completion", tag)] >= 2, services.calls
            assert services.calls[(asked_on, "graph-rag", tag)] == 1, services.calls
            assert services.calls[(other_flow, "text-completion", tag)] == 0, services.calls
            assert services.calls[(other_flow, "graph-rag", tag)] == 0, services.calls

        # A run on flow-a is going (its graph-rag call waits) when tg-stop-flow removes flow-a.
        in_flight = asyncio.create_task(asked(url, workspace, "flow-a", "Where is Acme Industrial based? Q-HOLD"))
        await asyncio.wait_for(services.held.wait(), 90)
        await config_service.put(workspace, key, {"flow-b": flows["flow-b"]})
        await bridge.wait_state(request_topic(workspace, "flow-a"), "stopped")
        services.release.set()
        held = await in_flight
        assert held[-1].message_type == "answer", [m.content for m in held]
        assert "(flow-a)" in held[-1].content

        # flow-a is no longer consumed by the bridge: another consumer on its subscription gets every request.
        other = pulsar_client(url)
        try:
            consumer = await other.subscribe(
                request_topic(workspace, "flow-a"),
                f"{PROCESSOR}--{workspace}--flow-a--request",
                consumer_type=pulsar.ConsumerType.Shared,
            )
            producer = await other.create_producer(request_topic(workspace, "flow-a"), batching_enabled=False)
            ids = [f"after-stop-{uuid.uuid4().hex[:8]}" for _ in range(4)]
            for request_id in ids:
                await producer.send(
                    encode_request(AgentRequest(question="Anyone there?")), properties={"id": request_id}
                )
            received = []
            for _ in ids:
                message = await asyncio.wait_for(consumer.receive(), 60)
                await consumer.acknowledge(message)
                received.append(message.properties()["id"])
        finally:
            await other.close()
        assert sorted(received) == sorted(ids)
        for request_id in ids:  # and no run was started for any of them
            with pytest.raises(RPCError):
                await temporal_env.client.get_workflow_handle(workflow_id_for(request_id)).describe()

        # flow-b still works; asked there, flow-a's question gets flow-b's graph-rag answer, not flow-a's cached one.
        again = await asked(url, workspace, "flow-b", "Where is Acme Industrial based? Q-B2")
        assert again[-1].message_type == "answer" and "(flow-b)" in again[-1].content
        assert services.calls[("flow-b", "graph-rag", "Q-B2")] == 1
        assert services.calls[("flow-a", "text-completion", "Q-B2")] == 0
        repeated = await asked(url, workspace, "flow-b", "Where is Acme Industrial based? Q-A1")
        assert repeated[-1].message_type == "answer", [m.content for m in repeated]
        assert services.calls[("flow-b", "graph-rag", "Q-A1")] == 1, services.calls

        # tg-start-flow flow-a again: served again, on its own services.
        await config_service.put(workspace, key, flows)
        await bridge.wait_state(request_topic(workspace, "flow-a"), "running")
        restarted = await asked(url, workspace, "flow-a", "Where is Acme Industrial based? Q-A2")
        assert restarted[-1].message_type == "answer" and "(flow-a)" in restarted[-1].content
        assert services.calls[("flow-a", "graph-rag", "Q-A2")] == 1
        assert services.calls[("flow-b", "graph-rag", "Q-A2")] == 0
    finally:
        await services.stop()


async def test_each_flow_sends_what_belongs_to_trustgraph_s_agent_to_its_own_next_topic(
    config_service: ConfigService,  # noqa: F811
    bridge: Bridge,
    pulsar_url: str,
    unique: str,
) -> None:
    """Flows that run TrustGraph's agent beside this service wire this service's `next` to that agent's request
    topic, each flow its own: a request for TrustGraph's ReAct pattern asked on a flow goes there, never to another
    flow's. A flow whose `next` is its own request topic (TrustGraph's blueprints) has no agent of its own to send
    it to: without `react_request_topic`, the caller is told so."""
    workspace = f"test-{unique}"
    beside = {flow: definition(workspace, flow) for flow in FLOWS}
    for flow in FLOWS:
        beside[flow]["topics"]["next"] = queue("request", "agent-tg", workspace, flow)
    stock = definition(workspace, "flow-c")
    client = pulsar_client(pulsar_url)
    try:
        listening = {
            flow: await client.subscribe(pulsar_topic(queue("request", "agent-tg", workspace, flow)), "agent-tg")
            for flow in FLOWS
        }
        await config_service.put(workspace, f"processor:{PROCESSOR}", {**beside, "flow-c": stock})
        for flow in (*FLOWS, "flow-c"):
            await bridge.wait_state(request_topic(workspace, flow), "running")
        forwarded: dict[str, list[str]] = {flow: [] for flow in FLOWS}
        for flow in FLOWS:
            producer = await client.create_producer(request_topic(workspace, flow), batching_enabled=False)
            await producer.send(
                encode_request(AgentRequest(question="Think it through", pattern="react")),
                properties={"id": f"react-{flow}"},
            )
        for flow, consumer in listening.items():
            message = await asyncio.wait_for(consumer.receive(), 30)
            forwarded[flow].append(message.properties()["id"])
        refused = await asked(pulsar_url, workspace, "flow-c", "Think it through", pattern="react")
    finally:
        await client.close()
    assert forwarded == {"flow-a": ["react-flow-a"], "flow-b": ["react-flow-b"]}
    assert [m.message_type for m in refused] == ["error"] and "react_request_topic" in refused[0].content
