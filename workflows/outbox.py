"""The caller's messages, from workflow code: queued in order and drained by one sender that publishes
whatever queued up meanwhile in one `publish` local activity (the worker publishes to Pulsar itself: no
server round trip), so the work never waits for a server to relay a message and the messages keep their
order. An explain message travels with its entity, whose triples the activity builds; the activity answers
whether the entities are to be stored, which a listener (RunContext) hands to the explain store
(workflows/explain_store.py).

Delivery is at least once, in order per request: a worker that dies after publishing but before its
workflow task completed publishes again on replay, with the same message ids."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow

from workflows.activity_options import DELIVERY_RETRY

with workflow.unsafe.imports_passed_through():
    from contracts.explain import Explained
    from contracts.explain_delivery import ExplainMessage, OutboxBatch, Published
    from contracts.names import Activities
    from contracts.subagent import SubagentReturn
    from contracts.wire import AgentResponse

MAX_BATCH = 500  # messages per activity: keeps each payload far below Temporal's limits
# A broker that refuses a message is retried inside the workflow task for this long, then on timers, so
# the run's own work goes on meanwhile.
LOCAL_RETRY_THRESHOLD = timedelta(seconds=2)


def closes_dialog(response: AgentResponse) -> bool:
    """Part of how the dialog ends: an answer's chunk, an error, or the message that ends it."""
    return response.message_type in ("answer", "error") or response.end_of_dialog or response.error is not None


class Outbox:
    def __init__(
        self,
        topic: str,
        request_id: str,
        id_prefix: str,
        subagent: SubagentReturn | None = None,
        on_published: Callable[[Published, list[Explained]], None] | None = None,
    ) -> None:
        self._topic, self._request_id, self._prefix = topic, request_id, id_prefix
        self._subagent = subagent  # a supervisor's sub-goal: the publisher turns the dialog's end into a completion
        self._on_published = on_published  # told of each batch published: what the publisher said, its entities
        self._seq = 0
        # The messages that end the caller's dialog (the answer's chunks, an error), as sent: the run's result
        # keeps them, so a caller that missed them gets them from Temporal (service/run_recovery.py).
        self.closing: list[AgentResponse] = []
        self._queued: list[AgentResponse] = []
        self._sender: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None  # a sender that gave up: the run must not end as if delivered

    def emit(self, response: AgentResponse) -> None:
        """`response.message_id`, when set, names the entity it is a chunk of; otherwise the message is one."""
        self._seq += 1
        # Stable per message: an emit retried after a timeout carries the same id, so clients dedupe.
        response.delivery_id = f"{self._prefix}#{self._seq}"
        response.message_id = response.message_id or response.delivery_id
        if closes_dialog(response):
            self.closing.append(response)
        self._queued.append(response)
        if self._sender is None or self._sender.done():
            self._note_failure()
            self._sender = asyncio.create_task(self._send())

    async def _send(self) -> None:
        while self._queued:
            batch, self._queued = self._queued[:MAX_BATCH], self._queued[MAX_BATCH:]
            explained = {r.delivery_id: r.explained for r in batch if isinstance(r, ExplainMessage)}
            message = OutboxBatch(
                topic=self._topic,
                request_id=self._request_id,
                responses=batch,
                subagent=self._subagent,
                explained=explained,
            )
            published = await workflow.execute_local_activity(
                Activities.PUBLISH,
                message,
                result_type=Published,
                start_to_close_timeout=timedelta(seconds=15),
                schedule_to_close_timeout=timedelta(minutes=10),
                retry_policy=DELIVERY_RETRY,
                local_retry_threshold=LOCAL_RETRY_THRESHOLD,
            )
            if self._on_published is not None:
                self._on_published(published, list(explained.values()))

    def _note_failure(self) -> None:
        sender = self._sender
        if self._failure is None and sender is not None and sender.done() and not sender.cancelled():
            self._failure = sender.exception()

    async def flush(self) -> None:
        """Wait until every queued message is published (before the run may end); raise if any was not."""
        while self._sender is not None and not self._sender.done():
            await self._sender
        self._note_failure()
        if self._failure is not None:
            raise self._failure
