"""The bridge's `emit` activity: AgentResponse -> superset JSON on the response topic, `id` property set.

Batching is off: every message is on the caller's latency path, and a batching producer would hold
each one for its publish delay (measured: BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio

import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Producer
from temporalio import activity
from temporalio.exceptions import ApplicationError

from bridge.bridge_metrics import EMIT_SECONDS
from contracts.names import Activities
from contracts.wire import AgentResponse, EmitInput
from contracts.wire_codec import encode_response
from service.connections import PULSAR_ERRORS

log = structlog.get_logger(__name__)


class ResponsePublisher:
    def __init__(self, client: AsyncPulsarClient, pulsar_url: str) -> None:
        self.client = client
        self.pulsar_url = pulsar_url
        self._producers: dict[str, Producer] = {}
        self._lock = asyncio.Lock()

    async def _producer(self, topic: str) -> Producer:
        producer = self._producers.get(topic)
        if producer is None:
            async with self._lock:
                producer = self._producers.get(topic)
                if producer is None:
                    producer = await self.client.create_producer(
                        topic, batching_enabled=False, send_timeout_millis=10000
                    )
                    self._producers[topic] = producer
        return producer

    async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
        with EMIT_SECONDS.time():
            await self._publish(topic, request_id, response)

    async def _publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
        try:
            producer = await self._producer(topic)
            await producer.send(encode_response(response), properties={"id": request_id})
        except PULSAR_ERRORS as exc:
            self._producers.pop(topic, None)
            raise ApplicationError(
                f"Pulsar at {self.pulsar_url} could not take the response on {topic}: {exc}",
                type="PulsarUnavailable",
            ) from exc

    async def close(self) -> None:
        for producer in self._producers.values():
            try:
                await producer.close()
            except PULSAR_ERRORS:
                pass
        self._producers.clear()


class EmitActivities:
    def __init__(self, publisher: ResponsePublisher) -> None:
        self.publisher = publisher

    @activity.defn(name=Activities.EMIT)
    async def emit(self, message: EmitInput) -> None:
        """Publish in order. After a retry, messages already sent go out again with the same message_id,
        which is how clients recognise and drop them."""
        for response in message.responses:
            await self.publisher.publish(message.topic, message.request_id, response)
            log.debug("emitted", request_id=message.request_id, message_id=response.message_id,
                      message_type=response.message_type)
