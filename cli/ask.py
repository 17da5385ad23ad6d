"""A TrustGraph-style Pulsar client: publish one AgentRequest, yield its AgentResponses as they arrive."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pulsar
import structlog

from contracts.delivery import Repeats, delivered
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import ResponseDecodeError, decode_response, encode_request
from service.connections import PULSAR_ERRORS, pulsar_client

log = structlog.get_logger(__name__)


class AskTimeout(TimeoutError):
    pass


def timeout_message(timeout_s: float, request_id: str, received: int, last_type: str) -> str:
    """What a caller left without an answer needs: how far the run got, and where to look for it (the run may
    still be going, or may have ended with its answer lost on the way)."""
    got = f"{received} message(s) received, the last a {last_type}" if received else "no message received"
    return (f"no final answer within {timeout_s:.0f}s (request id {request_id}; {got}); the run: "
            f"temporal workflow show --workflow-id {workflow_id_for(request_id)}")


async def ask(pulsar_url: str, request: AgentRequest, *, request_topic: str, response_topic: str,
              timeout_s: float = 600.0, request_id: str | None = None) -> AsyncIterator[AgentResponse]:
    """Subscribe first (position latest, as TrustGraph's callers do), then send; stop at end of dialog.
    `timeout_s` bounds the time spent waiting for messages, not the time the caller spends on them."""
    request_id = request_id or str(uuid.uuid4())
    client = pulsar_client(pulsar_url)
    try:
        try:
            consumer = await client.subscribe(
                response_topic, f"rr-{uuid.uuid4().hex}", consumer_type=pulsar.ConsumerType.Exclusive,
                initial_position=pulsar.InitialPosition.Latest,
            )
            producer = await client.create_producer(request_topic, batching_enabled=False)
            await producer.send(encode_request(request), properties={"id": request_id})
        except PULSAR_ERRORS as exc:
            raise ConnectionError(f"Pulsar at {pulsar_url} is unreachable: {exc}") from exc
        repeats = Repeats()
        received, last_type = 0, ""  # this request's messages so far, for a timeout's message
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AskTimeout(timeout_message(timeout_s, request_id, received, last_type))
            try:
                message = await asyncio.wait_for(consumer.receive(), timeout=remaining)
                await consumer.acknowledge(message)
            except TimeoutError:
                continue
            except PULSAR_ERRORS as exc:
                raise ConnectionError(f"Pulsar at {pulsar_url} stopped answering (request id {request_id}, "
                                      f"sent; the run goes on): {exc}") from exc
            if (message.properties() or {}).get("id") != request_id:
                continue
            try:
                response = delivered(decode_response(message.data()), message.properties())
            except ResponseDecodeError as exc:  # not ours to stop on: said, and the run's next message awaited
                log.warning("bad_response", request_id=request_id, error=str(exc))
                continue
            if repeats.repeated(response):
                continue  # a publish retried after a timeout: same message again (the chunks of one answer
                # share a message_id: a repeat is known by its delivery id)
            received, last_type = received + 1, response.message_type
            handed = loop.time()
            yield response
            # The time the caller holds a message (a person answering an inline override prompt) is not
            # time the run took: the deadline moves by it.
            deadline += loop.time() - handed
            if response.end_of_dialog or response.error is not None:
                return
    finally:
        await client.close()
