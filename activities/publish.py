"""The caller's messages leave through `publish`, the workflow worker's local activity (no server round trip),
and a streamed answer's sentences, which the synthesis activity sends through the same `send_in_order`."""

from __future__ import annotations

from typing import Protocol

import structlog
from temporalio import activity

from contracts.names import Activities
from contracts.subagent import FAILED_PREFIX
from contracts.wire import AgentResponse, EmitInput

log = structlog.get_logger(__name__)


class Publisher(Protocol):
    """Where messages go: service/response_publisher.ResponsePublisher (Pulsar), or a test's recorder."""

    async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None: ...


class ExplainStore(Protocol):
    """Where explain triples are kept for later queries: ResponsePublisher writes them to the flow's triples
    store, with the librarian documents they link to, as TrustGraph's agent does; the message as stored is
    what the caller gets."""

    async def store_explain(self, response_topic: str, collection: str, response: AgentResponse,
                            answer: str = "") -> AgentResponse: ...


class CompletionSender(Protocol):
    """Sends a sub-goal's completion (an AgentRequest) to TrustGraph's agent: ResponsePublisher does."""

    async def publish_request(self, topic: str, request_id: str, payload: bytes) -> None: ...


def completion_text(response: AgentResponse) -> str:
    """What the supervisor's aggregator is told: the answer, or why there is none (it then synthesises from
    the other sub-goals; an error instead would end the caller's dialog while the siblings still run)."""
    if response.message_type == "error":
        return FAILED_PREFIX + (response.error.message if response.error else response.content)
    return response.content


def answer_text(message: EmitInput, explain: AgentResponse) -> str:
    """The answer an explain message is about, when its chunks travel in the same batch (they carry the
    answer entity's URI as message_id: workflows/run_context.answer), after the start of it the synthesis
    activity already published, if any; "" otherwise."""
    chunks = [r for r in message.responses
              if r.message_type == "answer" and explain.explain_id and r.message_id == explain.explain_id]
    if not chunks or not chunks[-1].end_of_message:
        return ""
    return message.released_answer + "".join(r.content for r in chunks)


class PublishActivities:
    """How a run's messages reach the caller (docs/architecture.md, "Out: messages to the caller")."""

    def __init__(self, publisher: Publisher) -> None:
        self.publisher = publisher
        # A publisher that can store explain triples does (Pulsar's); a test's recorder only records.
        self.store: ExplainStore | None = publisher if hasattr(publisher, "store_explain") else None  # type: ignore[assignment]

    async def send_in_order(self, message: EmitInput) -> None:
        """After a retry, messages already sent go out again with the same message_id, which is how clients
        recognise and drop them."""
        for response in message.responses:
            if message.subagent is not None and response.end_of_dialog:
                # A sub-goal's run never ends the caller's dialog: TrustGraph's supervisor does, once every
                # sub-goal has reported. Sent again after a retry, it only repeats the same goal's result.
                sender: CompletionSender = self.publisher  # type: ignore[assignment]
                await sender.publish_request(message.subagent.topic, message.request_id,
                                             message.subagent.completion(completion_text(response)))
                log.info("subagent_completion_sent", request_id=message.request_id,
                         correlation_id=message.subagent.correlation_id, topic=message.subagent.topic)
                continue
            if response.message_type == "explain" and self.store is not None:
                response = await self.store.store_explain(message.topic, message.collection, response,
                                                          answer_text(message, response))
            await self.publisher.publish(message.topic, message.request_id, response)
            log.debug("published", request_id=message.request_id, message_id=response.message_id,
                      message_type=response.message_type)

    @activity.defn(name=Activities.PUBLISH)
    async def publish(self, message: EmitInput) -> None:
        await self.send_in_order(message)
