"""Pulsar AgentRequests in -> one ConfidenceAgentWorkflow per request id.

Every message is acknowledged exactly when its fate is settled: after Temporal accepted the start (or
already had it: a duplicate), after the caller got an error response, or after it was handed to the
existing agent-manager. Bad input never loops. Follow-up requests with state "override" answer a
waiting run; runs that fail get an error response (or, with fallback on, go to the existing agent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import pulsar
import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Consumer, Producer
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from bridge.bridge_metrics import REQUEST_SECONDS
from bridge.canary import takes_request
from bridge.run_summary import run_details, run_summary
from bridge.trustgraph_loop import loop_request, served_subgoal, undecoded_subgoal
from contracts.flow import FlowTopics
from contracts.names import WORKFLOW_NAME, TaskQueues, workflow_id_for
from contracts.override import OVERRIDE_STATE, OverrideRejected
from contracts.redaction import redact_text
from contracts.run import AgentRunInput, AgentRunResult
from contracts.subagent import FAILED_PREFIX, SubagentReturn, subgoal_run_request
from contracts.topics import is_persistent, paired_response_topic
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import RequestDecodeError, decode_request, error_response
from overrides.checks import parse_pulsar_override, refusal_reason
from service.defaults import PROCESSOR_ID
from service.response_publisher import ResponsePublisher
from service.run_client import AgentRun
from service.trustgraph_metrics import CONSUMER_PROCESSED, CONSUMER_SECONDS, CONSUMER_STATE

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Routing:
    """Canary and fallback settings."""

    enabled: bool = True
    traffic_percentage: float = 100.0
    fallback_to_react: bool = False
    react_request_topic: str = ""
    # Answer the sub-goals of TrustGraph's supervisor that reach this topic, and report each to it
    # (contracts/subagent.py); off: they go to react_request_topic like the rest of its loop.
    serve_subagent_goals: bool = True


class RequestRelay:
    def __init__(
        self,
        temporal: Client,
        pulsar_client: AsyncPulsarClient,
        publisher: ResponsePublisher,
        *,
        request_topics: list[str],
        subscription: str,
        response_topic: str,
        queues: TaskQueues,
        routing: Routing | None = None,
        max_in_flight: int = 64,
        processor: str = PROCESSOR_ID,
        flow: FlowTopics | None = None,
    ) -> None:
        self.temporal = temporal
        self.flow = flow  # the TrustGraph flow these topics belong to: its runs call that flow's services
        self.processor = processor  # the `processor` label of TrustGraph's consumer metrics
        self.pulsar = pulsar_client
        self.publisher = publisher
        self.request_topics = request_topics
        self.subscription = subscription
        self.response_topic = response_topic
        self.queues = queues
        self.routing = routing or Routing()
        self._slots = asyncio.Semaphore(max_in_flight)
        self._handlers: set[asyncio.Task[None]] = set()  # settle a message: awaited on shutdown
        self._watchers: set[asyncio.Task[None]] = set()  # wait for a run's end: cancelled on shutdown
        self._react: Producer | None = None
        self._react_lock = asyncio.Lock()
        self.consumer: Consumer | None = None

    async def subscribe(self) -> None:
        self.consumer = await self.pulsar.subscribe(
            self.request_topics,
            self.subscription,
            consumer_type=pulsar.ConsumerType.Shared,
            negative_ack_redelivery_delay_ms=5000,
        )
        self._consumer_state("running")

    def _consumer_state(self, state: str) -> None:
        for topic in self.request_topics:
            CONSUMER_STATE.labels(processor=self.processor, consumer=topic).state(state)

    async def run(self) -> None:
        if self.consumer is None:
            await self.subscribe()
        assert self.consumer is not None
        while True:
            message = await self.consumer.receive()
            await self._slots.acquire()
            self._spawn(self._handlers, self._handle_guarded(message))

    @staticmethod
    def _spawn(tasks: set[asyncio.Task[None]], coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _handle_guarded(self, message: pulsar.Message) -> None:
        topic = message.topic_name()
        status = "ok"
        try:
            with REQUEST_SECONDS.time(), CONSUMER_SECONDS.labels(processor=self.processor, consumer=topic).time():
                await self.handle(message)
        except Exception:  # one bad message must never stop the relay
            status = "error"
            log.exception("request_handling_failed", topic=topic)
            await self._ack(message)
        finally:
            CONSUMER_PROCESSED.labels(processor=self.processor, consumer=topic, status=status).inc()
            self._slots.release()

    async def _ack(self, message: pulsar.Message) -> None:
        assert self.consumer is not None
        await self.consumer.acknowledge(message)

    def response_topic_for(self, request_topic: str) -> str:
        """Answers go where the request's caller listens: the response topic paired with its request topic."""
        return paired_response_topic(request_topic, self.response_topic)

    async def _reply(self, topic: str, request_id: str, response: AgentResponse) -> None:
        await self.publisher.publish(self.response_topic_for(topic), request_id, response)

    async def _reply_error(self, topic: str, request_id: str, text: str) -> None:
        await self._reply(topic, request_id, error_response(text, f"{request_id}#error"))

    async def _refuse(self, topic: str, request_id: str, text: str, subagent: SubagentReturn | None) -> None:
        """A request that could not be started: its caller gets the error. A supervisor's sub-goal is reported to
        the supervisor as that sub-goal's failed completion instead, as TrustGraph's sub-agents report an error:
        an error under the parent's id would end the caller's whole dialog while the other sub-goals still run."""
        if subagent is None:
            await self._reply_error(topic, request_id, text)
            return
        await self._report(request_id, subagent, text, reason="subagent-not-started")

    async def _report(self, request_id: str, subagent: SubagentReturn, failure: str, reason: str) -> None:
        """A served sub-goal that has no answer, reported to the supervisor's aggregator as failed."""
        await self._forward(request_id, subagent.completion(f"{FAILED_PREFIX}{failure}"), reason=reason)

    async def handle(self, message: pulsar.Message) -> None:
        request_id = (message.properties() or {}).get("id", "")
        topic = message.topic_name()
        r = self.routing
        try:
            request = decode_request(message.data())
        except RequestDecodeError as exc:
            log.warning("bad_request", request_id=request_id, topic=topic, error=str(exc))
            if request_id:
                subgoal = undecoded_subgoal(message.data(), r.serve_subagent_goals, r.react_request_topic)
                await self._refuse(topic, request_id, f"Bad AgentRequest: {exc}", subgoal)
            await self._ack(message)
            return
        if not request_id:
            log.warning("request_without_id", topic=topic, question=redact_text(request.question[:80]))
            await self._ack(message)
            return
        if request.state == OVERRIDE_STATE:
            await self._relay_override(topic, request_id, request)
            await self._ack(message)
            return
        subagent = served_subgoal(request, r.serve_subagent_goals, r.react_request_topic)
        loop = "" if subagent else loop_request(request)
        if loop:
            if r.react_request_topic:
                await self._forward(request_id, message.data(), reason="trustgraph-loop")
            else:
                log.warning("trustgraph_loop_request_refused", request_id=request_id, what=loop)
                await self._reply_error(
                    topic,
                    request_id,
                    f"This request is {loop}, which this service does not "
                    "serve. Run TrustGraph's agent-manager on a topic of its own and give "
                    "the bridge that topic as react_request_topic: it forwards such requests "
                    "there (docs/trustgraph.md).",
                )
            await self._ack(message)
            return
        if subagent is None and not takes_request(request_id, r.enabled, r.traffic_percentage):
            await self._forward(request_id, message.data(), reason="canary")
            await self._ack(message)
            return
        if await self._start(request_id, request, topic, message, subagent):
            await self._ack(message)

    async def _start(
        self,
        request_id: str,
        request: AgentRequest,
        topic: str,
        message: pulsar.Message,
        subagent: SubagentReturn | None = None,
    ) -> bool:
        """Start the run; False when the message was negatively acknowledged for redelivery."""
        # A supervisor's sub-goals all carry the parent's id: each gets a run of its own.
        workflow_id = workflow_id_for(subagent.run_key(request_id) if subagent else request_id)
        if subagent is not None:
            request = subgoal_run_request(request)
        response_topic = self.response_topic_for(topic)
        # A secret pasted into a question answers nothing a graph holds: redacted here, it reaches neither the
        # run's history nor the model, the graph, the conversation's memory or a log.
        request = request.model_copy(update={"question": redact_text(request.question)})
        run_input = AgentRunInput(
            request=request,
            request_id=request_id,
            response_topic=response_topic,
            queues=self.queues,
            fallback_on_failure=self.routing.fallback_to_react,
            subagent=subagent,
            flow=self.flow,
        )
        try:
            handle = await self.temporal.start_workflow(
                WORKFLOW_NAME,
                run_input,
                id=workflow_id,
                task_queue=self.queues.workflow,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                result_type=AgentRunResult,
                static_summary=run_summary(request),
                static_details=run_details(request_id, request, topic, response_topic),
            )
        except WorkflowAlreadyStartedError:
            if await self._reused_id(workflow_id, request):
                log.warning("reused_request_id", request_id=request_id, workflow_id=workflow_id)
                await self._refuse(
                    topic,
                    request_id,
                    f"Request id {request_id} was already used by another request: send each request with an id of "
                    "its own",
                    subagent,
                )
            else:  # the same message again (a redelivery): its run answers it
                log.info("duplicate_request", request_id=request_id, workflow_id=workflow_id)
            return True
        except RPCError as exc:
            if exc.status == RPCStatusCode.INVALID_ARGUMENT:  # the request itself: redelivery cannot help
                log.error("workflow_start_refused", request_id=request_id, error=str(exc))
                await self._refuse(topic, request_id, f"Temporal refused to start the request: {exc.message}", subagent)
                return True
            log.error("temporal_unavailable", request_id=request_id, error=str(exc))
            if is_persistent(topic):
                assert self.consumer is not None
                await self.consumer.negative_acknowledge(message)
                return False
            await self._refuse(topic, request_id, f"The agent service cannot start the request: {exc}", subagent)
            return True
        log.info("workflow_started", request_id=request_id, workflow_id=workflow_id)
        self._spawn(self._watchers, self._watch(handle, topic, request_id, message.data(), subagent))
        return True

    async def _reused_id(self, workflow_id: str, request: AgentRequest) -> bool:
        """Whether the run with this id was started by a different request (not a redelivery of this one)."""
        try:
            async for event in self.temporal.get_workflow_handle(workflow_id).fetch_history_events():
                payloads = event.workflow_execution_started_event_attributes.input.payloads
                [started] = await self.temporal.data_converter.decode(payloads, [AgentRunInput])
                return started.request != request
        except (RPCError, ValueError, TypeError) as exc:  # unreadable: take it as the same request
            log.warning("duplicate_request_unchecked", workflow_id=workflow_id, error=str(exc))
        return False

    async def _watch(
        self,
        handle: WorkflowHandle[Any, AgentRunResult],
        topic: str,
        request_id: str,
        payload: bytes,
        subagent: SubagentReturn | None = None,
    ) -> None:
        """A run that fails is never silence: the caller gets an error, or the existing agent gets the request."""
        try:
            result: AgentRunResult = await handle.result()
        except WorkflowFailureError as exc:
            reason = str(exc.cause or exc)
            log.error("workflow_failed", request_id=request_id, workflow_id=handle.id, error=reason)
            if self.routing.fallback_to_react:
                await self._forward(request_id, payload, reason="failed")
            elif subagent is not None:  # the supervisor is told, not the caller (contracts/subagent.py)
                await self._report(request_id, subagent, reason, reason="subagent-failed")
            else:
                await self._reply_error(topic, request_id, f"The agent run failed: {reason}")
            return
        except (RPCError, asyncio.CancelledError):
            return  # the bridge is stopping or lost Temporal: the run itself goes on
        if result.needs_fallback:
            await self._forward(request_id, payload, reason=f"failed: {result.error}")

    async def _forward(self, request_id: str, payload: bytes, reason: str) -> None:
        """Hand the request, unchanged, to the existing agent-manager; it answers on the same response topic."""
        async with self._react_lock:
            if self._react is None:
                self._react = await self.pulsar.create_producer(
                    self.routing.react_request_topic, batching_enabled=False
                )
        await self._react.send(payload, properties={"id": request_id})
        log.info("forwarded_to_react", request_id=request_id, reason=reason, topic=self.routing.react_request_topic)

    async def _relay_override(self, topic: str, request_id: str, request: AgentRequest) -> None:
        """A follow-up AgentRequest answering an override request becomes the run's submit_override update."""
        target = request.correlation_id or request.session_id
        if not target:
            await self._reply_error(
                topic,
                request_id,
                "An override needs correlation_id: the waiting run's "
                "workflow id (agent-...) or its original request id",
            )
            return
        workflow_id = target if target.startswith("agent-") else workflow_id_for(target)
        try:
            override = parse_pulsar_override(request.question)
            if not override.by and request.user:  # who sends the follow-up decides, unless the decision names someone
                override = override.model_copy(update={"by": request.user})
            outcome = await AgentRun(self.temporal, workflow_id).submit_override(override)
        except OverrideRejected as exc:
            await self._reply_error(topic, request_id, f"Override not understood: {exc}")
            return
        except WorkflowUpdateFailedError as exc:
            await self._reply_error(topic, request_id, f"Override rejected: {refusal_reason(exc.cause)}")
            return
        except RPCError as exc:
            await self._reply_error(topic, request_id, f"Override for {workflow_id} failed: {exc.message}")
            return
        log.info("override_relayed", request_id=request_id, workflow_id=workflow_id, outcome=outcome)
        await self._reply(
            topic,
            request_id,
            AgentResponse(
                message_type="answer",
                content=str(outcome),
                end_of_message=True,
                end_of_dialog=True,
                message_id=f"{request_id}#override",
            ),
        )

    async def drain(self) -> None:
        """Settle the messages in hand; stop watching runs (they go on in Temporal regardless)."""
        self._consumer_state("stopped")
        if self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)
        for task in list(self._watchers):
            task.cancel()
        if self._watchers:
            await asyncio.gather(*self._watchers, return_exceptions=True)
