"""The API's side of the Pulsar contract: it sends each chat message as an AgentRequest on the agent's
request topic (the bridge starts the run, as for any TrustGraph client) and reads the response topic with
one subscription, handing each response to the stream of its request id. Streams keep their messages so a
client that reconnects gets the run from where it left; finished streams are dropped oldest first."""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import pulsar
import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from pulsar.asyncio import Consumer, Producer

from chat.events import is_final
from contracts.delivery import Repeats, Sequence, delivered
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import ResponseDecodeError, decode_response, encode_request

log = structlog.get_logger(__name__)
RETAINED_FINISHED = 200  # finished streams kept for reconnecting clients
RECEIVE_RETRY_S = 1.0  # after a failed receive from the broker


@dataclass
class RunStream:
    request_id: str
    workflow_id: str
    messages: list[AgentResponse] = field(default_factory=list)
    finished: bool = False
    _repeats: Repeats = field(default_factory=Repeats)
    _sequence: Sequence = field(default_factory=Sequence)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, message: AgentResponse) -> bool:
        """`message` with its delivery id (contracts/delivery.py): the chunks of one answer share a message_id.
        False when it was here already (a publish retried after a timeout, a message recovered from Temporal
        that came after all)."""
        if self._repeats.repeated(message):
            return False
        if self._sequence.gap(message):
            log.warning("delivery_gap", request_id=self.request_id, delivery_id=message.delivery_id)
        self.messages.append(message)
        self.finished = self.finished or is_final(message)
        self._changed.set()
        return True

    async def wait(self, after: int, timeout_s: float) -> None:
        """Until there are more than `after` messages, or `timeout_s` passed."""
        if len(self.messages) > after:
            return
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout_s)
        except TimeoutError:
            pass


class RunStreams:
    def __init__(self, pulsar_client: AsyncPulsarClient, request_topic: str, response_topic: str) -> None:
        self.pulsar = pulsar_client
        self.request_topic = request_topic
        self.response_topic = response_topic
        self._streams: OrderedDict[str, RunStream] = OrderedDict()  # by request id
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        # Exclusive and our own: every API process sees every response, and picks its own requests' out.
        self._consumer = await self.pulsar.subscribe(
            self.response_topic,
            f"chat-api-{uuid.uuid4().hex}",
            consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Latest,
        )
        self._producer = await self.pulsar.create_producer(self.request_topic, batching_enabled=False)
        self._reader = asyncio.create_task(self._read())

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        for part in (self._producer, self._consumer):
            if part is not None:
                await part.close()

    async def _read(self) -> None:
        """Every response to this process's streams. Nothing one message holds stops the reader: a bad one is
        logged and skipped, and a failed receive is logged and tried again, so no open stream stalls."""
        assert self._consumer is not None
        while True:
            try:
                message = await self._consumer.receive()
                await self._consumer.acknowledge(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the broker: reconnecting is the client's job, waiting is ours
                log.error("response_receive_failed", error=str(exc))
                await asyncio.sleep(RECEIVE_RETRY_S)
                continue
            self._deliver(message)

    def _deliver(self, message: Any) -> None:
        try:
            stream = self._streams.get(str((message.properties() or {}).get("id", "")))
            if stream is None:
                return  # another client's request
            stream.add(delivered(decode_response(message.data()), message.properties()))
        except ResponseDecodeError as exc:
            log.warning("bad_response", error=str(exc))
        except Exception:  # a fault of ours with one message must not end every stream
            log.exception("response_not_delivered")

    def _open(self, request_id: str, workflow_id: str) -> RunStream:
        stream = RunStream(request_id=request_id, workflow_id=workflow_id)
        self._streams[request_id] = stream
        finished = [k for k, s in self._streams.items() if s.finished]
        for key in finished[: max(0, len(finished) - RETAINED_FINISHED)]:
            del self._streams[key]
        return stream

    async def ask(self, request: AgentRequest, request_id: str = "") -> RunStream:
        """Send one request; its stream exists before the request leaves, so no response is missed."""
        assert self._producer is not None, "start() first"
        request_id = request_id or f"chat-{uuid.uuid4().hex}"
        stream = self._open(request_id, workflow_id_for(request_id))
        await self._producer.send(encode_request(request), properties={"id": request_id})
        log.info("chat_request_sent", request_id=request_id, conversation_id=request.conversation_id)
        return stream

    def find(self, workflow_id: str) -> RunStream | None:
        return next((s for s in self._streams.values() if s.workflow_id == workflow_id), None)

    def follow(self, workflow_id: str) -> RunStream:
        """The stream of a run this process did not start (or no longer holds): its messages from now on."""
        found = self.find(workflow_id)
        if found is not None:
            return found
        request_id = workflow_id.removeprefix("agent-")
        return self._open(request_id, workflow_id)
