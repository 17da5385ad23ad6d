"""The bridge following TrustGraph's flows (`trustgraph_flows`): it serves each flow TrustGraph's config service
lists for this processor (`processor:<processor_id>` in the configured workspace, written by `tg-start-flow`,
removed by `tg-stop-flow`), as TrustGraph's agent-manager does, without a restart.

Each flow gets a relay of its own: it consumes the flow's request topic on the subscription TrustGraph's
agent-manager uses (`<processor>--<workspace>--<flow>--request`), answers on the flow's response topic, and
starts runs that carry the flow's service topics (AgentRunInput.flow). What belongs to TrustGraph's own agent (its
loop's continuations, a pattern only it has, the canary's share, a fallback, a sub-goal's completion) goes to the
flow's own `next` topic when its definition names one other than its request topic: TrustGraph's agent's request
topic in that flow, as a blueprint that runs the two side by side wires it; else to `react_request_topic`, as
without flows (TrustGraph's blueprints loop an agent's `next` back to its own request topic).

When a flow leaves the config, its relay stops receiving, settles the messages it holds (each started or answered,
then acknowledged), and closes its consumer: a message it had not taken goes back to the subscription, never lost
and never started twice. Runs already started go on and answer on their flow's response topic; the relay keeps
watching them for failures. A flow whose definition changes while it runs keeps its topics, as in TrustGraph (stop
and start it again)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from temporalio.client import Client

from backends.trustgraph import PulsarRequestResponse
from backends.trustgraph_config import AgentFlow, FlowDefinitions
from bridge.relay import RequestRelay, Routing
from contracts.names import TaskQueues
from contracts.topics import agent_subscription, pulsar_topic
from service.connections import PULSAR_ERRORS
from service.response_publisher import ResponsePublisher

log = structlog.get_logger(__name__)


def next_topic(definition: str) -> str:
    """The Pulsar topic of a flow definition's `next` (this service's entry of the flow: `{"topics": {"request":
    ..., "next": ..., ...}}`) when it is not the flow's own request topic; "" otherwise."""
    try:
        topics = json.loads(definition).get("topics") or {}
        request, following = topics.get("request"), topics.get("next")
        if not following or (request and pulsar_topic(following) == pulsar_topic(request)):
            return ""
        return pulsar_topic(following)
    except (ValueError, TypeError, AttributeError):
        return ""


class AgentFlowDefinitions(FlowDefinitions):
    """The flows of this processor, and each one's `next` topic (next_topic), read from the same entries."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.next_topics: dict[str, str] = {}  # flow -> its `next` topic ("": none of its own)

    async def apply(self, values: dict[str, dict[str, str]], version: int) -> None:
        self.next_topics = {name: next_topic(text) for name, text in values.get(self.types[0], {}).items()}
        await super().apply(values, version)


class FlowRelay(RequestRelay):
    """One flow's relay: requests on its request topic are answered on its response topic."""

    def response_topic_for(self, request_topic: str) -> str:
        return self.response_topic  # the flow definition's, whatever its name

    async def retire(self, receiving: asyncio.Task[None]) -> None:
        """Stop taking requests: those in hand are settled before the consumer closes."""
        receiving.cancel()
        await asyncio.gather(receiving, return_exceptions=True)
        self._consumer_state("stopped")
        if self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)
        if self.consumer is not None:
            try:
                await self.consumer.close()
            except PULSAR_ERRORS as exc:
                log.warning("flow_consumer_close_failed", topic=self.request_topics, error=str(exc))


class FlowRelays:
    """The relays of the flows the config service lists now, started and retired as it changes."""

    def __init__(
        self,
        temporal: Client,
        pulsar_client: AsyncPulsarClient,
        publisher: ResponsePublisher,
        *,
        workspace: str,
        processor: str,
        queues: TaskQueues,
        routing: Routing,
    ) -> None:
        self.temporal = temporal
        self.pulsar = pulsar_client
        self.publisher = publisher
        self.workspace = workspace
        self.processor = processor
        self.queues = queues
        self.routing = routing
        self.served: dict[str, tuple[FlowRelay, asyncio.Task[None]]] = {}
        self.retired: list[FlowRelay] = []  # still watching their runs until the bridge stops
        self._lock = asyncio.Lock()  # one config version applied at a time
        self.definitions = AgentFlowDefinitions(PulsarRequestResponse(pulsar_client), workspace, processor, self.follow)

    async def subscribe(self) -> None:
        """Listen for the config service's pushes; the flows are read (and served) in the background."""
        await self.definitions.start()

    async def follow(self, flows: dict[str, AgentFlow]) -> None:
        async with self._lock:
            for name in sorted(set(self.served) - set(flows)):
                relay, receiving = self.served.pop(name)
                await relay.retire(receiving)
                self.retired.append(relay)
                log.info("flow_stopped", workspace=self.workspace, flow=name, topic=relay.request_topics[0])
            for name in sorted(set(flows) - set(self.served)):
                await self._start(flows[name])

    async def _start(self, flow: AgentFlow) -> None:
        react_topic = self.definitions.next_topics.get(flow.name) or self.routing.react_request_topic
        relay = FlowRelay(
            self.temporal,
            self.pulsar,
            self.publisher,
            request_topics=[flow.request_topic],
            subscription=agent_subscription(self.workspace, flow.name, self.processor),
            response_topic=flow.response_topic,
            queues=self.queues,
            routing=dataclasses.replace(self.routing, react_request_topic=react_topic),
            processor=self.processor,
            flow=flow.services,
        )
        try:
            await relay.subscribe()
        except PULSAR_ERRORS as exc:  # not served: the next config version read tries again
            log.error("flow_subscribe_failed", workspace=self.workspace, flow=flow.name, error=str(exc))
            return
        receiving = asyncio.create_task(relay.run())
        receiving.add_done_callback(lambda task: self._ended(flow.name, task))
        self.served[flow.name] = (relay, receiving)
        log.info(
            "flow_started",
            workspace=self.workspace,
            flow=flow.name,
            topic=flow.request_topic,
            response_topic=flow.response_topic,
            react_topic=react_topic,
            services=sorted(flow.services.services),
        )

    def _ended(self, name: str, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("flow_relay_failed", workspace=self.workspace, flow=name, error=str(task.exception()))

    async def run(self) -> None:
        """Serve until cancelled (the relays run in their own tasks)."""
        await asyncio.Event().wait()

    async def drain(self) -> None:
        """The bridge stops: settle every relay's messages in hand; runs go on in Temporal."""
        await self.definitions.aclose()
        async with self._lock:
            for relay, receiving in self.served.values():
                receiving.cancel()
                await asyncio.gather(receiving, return_exceptions=True)
                await relay.drain()
            for relay in self.retired:
                await relay.drain()
