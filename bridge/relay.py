"""Pulsar AgentRequests in -> one ConfidenceAgentWorkflow per request id.

Every message is acknowledged exactly when its fate is settled: after Temporal accepted the start (or
already had it: a duplicate), or after the caller got an error response. Bad input never loops.
"""

from __future__ import annotations

import asyncio

import pulsar
import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Consumer
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from bridge.emit import ResponsePublisher
from confidence_core.models import AgentRunInput, TaskQueues
from confidence_core.topics import is_persistent, workflow_id_for
from confidence_core.wire import RequestDecodeError, decode_request, error_response
from workflows.confidence_agent import WORKFLOW_NAME

log = structlog.get_logger(__name__)

class RequestRelay:
    def __init__(self, temporal: Client, pulsar_client: AsyncPulsarClient, publisher: ResponsePublisher, *,
                 request_topics: list[str], subscription: str, response_topic: str,
                 queues: TaskQueues, max_in_flight: int = 64) -> None:
        self.temporal = temporal
        self.pulsar = pulsar_client
        self.publisher = publisher
        self.request_topics = request_topics
        self.subscription = subscription
        self.response_topic = response_topic
        self.queues = queues
        self._slots = asyncio.Semaphore(max_in_flight)
        self._tasks: set[asyncio.Task[None]] = set()
        self.consumer: Consumer | None = None

    async def subscribe(self) -> None:
        self.consumer = await self.pulsar.subscribe(
            self.request_topics, self.subscription, consumer_type=pulsar.ConsumerType.Shared,
            negative_ack_redelivery_delay_ms=5000,
        )

    async def run(self) -> None:
        if self.consumer is None:
            await self.subscribe()
        assert self.consumer is not None
        while True:
            message = await self.consumer.receive()
            await self._slots.acquire()
            task = asyncio.create_task(self._handle_guarded(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _handle_guarded(self, message: pulsar.Message) -> None:
        try:
            await self.handle(message)
        except Exception:  # one bad message must never stop the relay
            log.exception("request_handling_failed", topic=message.topic_name())
            await self._ack(message)
        finally:
            self._slots.release()

    async def _ack(self, message: pulsar.Message) -> None:
        assert self.consumer is not None
        await self.consumer.acknowledge(message)

    async def _reply_error(self, request_id: str, text: str) -> None:
        await self.publisher.publish(self.response_topic, request_id, error_response(text, f"{request_id}#error"))

    async def handle(self, message: pulsar.Message) -> None:
        request_id = (message.properties() or {}).get("id", "")
        topic = message.topic_name()
        try:
            request = decode_request(message.data())
        except RequestDecodeError as exc:
            log.warning("bad_request", request_id=request_id, topic=topic, error=str(exc))
            if request_id:
                await self._reply_error(request_id, f"Bad AgentRequest: {exc}")
            await self._ack(message)
            return
        if not request_id:
            log.warning("request_without_id", topic=topic, question=request.question[:80])
            await self._ack(message)
            return
        workflow_id = workflow_id_for(request_id)
        run_input = AgentRunInput(request=request, request_id=request_id, response_topic=self.response_topic,
                                  queues=self.queues)
        try:
            await self.temporal.start_workflow(
                WORKFLOW_NAME, run_input, id=workflow_id, task_queue=self.queues.workflow,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )
            log.info("workflow_started", request_id=request_id, workflow_id=workflow_id)
        except WorkflowAlreadyStartedError:
            log.info("duplicate_request", request_id=request_id, workflow_id=workflow_id)
        except RPCError as exc:
            log.error("temporal_unavailable", request_id=request_id, error=str(exc))
            if is_persistent(topic):
                assert self.consumer is not None
                await self.consumer.negative_acknowledge(message)
                return
            await self._reply_error(request_id, f"The agent service cannot start the request: {exc}")
        await self._ack(message)

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
