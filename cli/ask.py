"""A TrustGraph-style Pulsar client: publish one AgentRequest, yield its AgentResponses as they arrive."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pulsar
import structlog

from contracts.delivery import Repeats, Sequence, delivered
from contracts.names import workflow_id_for
from contracts.redaction import shown_url
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import ResponseDecodeError, decode_response, encode_request
from service.connections import PULSAR_ERRORS, pulsar_client
from service.run_recovery import RunLookup

log = structlog.get_logger(__name__)

# A run silent this long is looked up in Temporal (when the caller can): a message the topic dropped would
# otherwise be waited for until the timeout. Runs talk often (every step has its thought and observation); a
# look-up is one describe call, and a status query while the run works.
SILENCE_S = 5.0
RECEIVE_RETRY_S = 1.0  # after a failed receive: the client reconnects by itself meanwhile


class AskTimeout(TimeoutError):
    pass


def timeout_message(timeout_s: float, request_id: str, received: int, last_type: str) -> str:
    """What a caller left without an answer needs: how far the run got, and where to look for it (the run may
    still be going, or may have ended with its answer lost on the way)."""
    got = f"{received} message(s) received, the last a {last_type}" if received else "no message received"
    return (
        f"no final answer within {timeout_s:.0f}s (request id {request_id}; {got}); the run: "
        f"temporal workflow show --workflow-id {workflow_id_for(request_id)}"
    )


@dataclass
class Delivery:
    """How one request's messages arrived, for a caller that reports it (the benchmarks): how many of the run's
    messages showed a hole before them, and how many were taken from Temporal instead of the topic."""

    gaps: int = 0
    recovered: int = 0

    @property
    def answer_recovered(self) -> bool:
        return self.recovered > 0


async def ask(
    pulsar_url: str,
    request: AgentRequest,
    *,
    request_topic: str,
    response_topic: str,
    timeout_s: float = 600.0,
    request_id: str | None = None,
    runs: RunLookup | None = None,
    delivery: Delivery | None = None,
    silence_s: float = SILENCE_S,
) -> AsyncIterator[AgentResponse]:
    """Subscribe first (position latest, as TrustGraph's callers do), then send; stop at end of dialog.
    `timeout_s` bounds the time spent waiting for messages, not the time the caller spends on them.

    `runs`: where the run is looked up when its messages show a hole or fall silent for `silence_s`: a run
    that completed hands over the messages that ended its dialog, a run waiting for a human the message that
    asked (service/run_recovery.py); each is yielded unless it already arrived. Without it, a message the
    topic dropped stays lost. `delivery`, when given, is filled in with what had to be recovered."""
    request_id = request_id or str(uuid.uuid4())
    workflow_id = workflow_id_for(request_id)
    delivery = delivery if delivery is not None else Delivery()
    client = pulsar_client(pulsar_url)
    receiving: asyncio.Future[pulsar.Message] | None = None
    try:
        try:
            consumer = await client.subscribe(
                response_topic,
                f"rr-{uuid.uuid4().hex}",
                consumer_type=pulsar.ConsumerType.Exclusive,
                initial_position=pulsar.InitialPosition.Latest,
            )
            producer = await client.create_producer(request_topic, batching_enabled=False)
            await producer.send(encode_request(request), properties={"id": request_id})
        except PULSAR_ERRORS as exc:
            raise ConnectionError(f"Pulsar at {shown_url(pulsar_url)} is unreachable: {exc}") from exc
        repeats, sequence = Repeats(), Sequence()
        received, last_type = 0, ""  # this request's messages so far, for a timeout's message
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AskTimeout(timeout_message(timeout_s, request_id, received, last_type))
            look_up = False
            arrived: list[tuple[AgentResponse, bool]] = []  # each with whether it came from Temporal
            # One receive in flight across silences: a cancelled receive() stays registered in the client,
            # and the message it is handed later goes to the cancelled future, which drops it.
            receiving = receiving or asyncio.ensure_future(consumer.receive())
            done, _ = await asyncio.wait({receiving}, timeout=min(remaining, silence_s))
            if not done:  # silence: the run is asked instead
                look_up = runs is not None
            else:
                finished, receiving = receiving, None
                try:
                    message = finished.result()
                    await consumer.acknowledge(message)
                except PULSAR_ERRORS as exc:
                    if runs is None:
                        raise ConnectionError(
                            f"Pulsar at {shown_url(pulsar_url)} stopped answering (request id "
                            f"{request_id}, sent; the run goes on): {exc}"
                        ) from exc
                    # The client reconnects by itself; meanwhile the run is asked instead.
                    log.warning("response_receive_failed", request_id=request_id, error=str(exc))
                    await asyncio.sleep(RECEIVE_RETRY_S)
                    look_up = True
                else:
                    response = ours(message, request_id)
                    if response is not None:
                        arrived.append((response, False))
                        if sequence.gap(response):
                            delivery.gaps += 1
                            log.warning("delivery_gap", request_id=request_id, delivery_id=response.delivery_id)
                            look_up = runs is not None
            if look_up and runs is not None:
                outcome = await runs.outcome(workflow_id)
                arrived.extend((response, True) for response in (outcome.handover if outcome else []))
            for response, from_temporal in arrived:
                if repeats.repeated(response):
                    continue  # a publish retried after a timeout, or a recovered message that came after all
                    # (the chunks of one answer share a message_id: a repeat is known by its delivery id)
                if from_temporal:
                    delivery.recovered += 1
                    log.warning(
                        "message_recovered_from_temporal",
                        request_id=request_id,
                        workflow_id=workflow_id,
                        message_type=response.message_type,
                        delivery_id=response.delivery_id,
                    )
                received, last_type = received + 1, response.message_type
                handed = loop.time()
                yield response
                # The time the caller holds a message (a person answering an inline override prompt) is not
                # time the run took: the deadline moves by it.
                deadline += loop.time() - handed
                if response.end_of_dialog or response.error is not None:
                    return
    finally:
        if receiving is not None:
            receiving.cancel()
        await client.close()


def ours(message: pulsar.Message, request_id: str) -> AgentResponse | None:
    """The response in `message` when it answers `request_id` and can be read (a bad one is logged)."""
    if (message.properties() or {}).get("id") != request_id:
        return None
    try:
        return delivered(decode_response(message.data()), message.properties())
    except ResponseDecodeError as exc:  # not ours to stop on: said, and the run's next message awaited
        log.warning("bad_response", request_id=request_id, error=str(exc))
        return None
