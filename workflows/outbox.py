"""The caller's messages, from workflow code: queued in order and drained by one sender that publishes
whatever queued up meanwhile in one `emit` activity on the bridge's queue, so the work never waits for
a message to be published and the messages keep their order."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow

from workflows.activity_options import DELIVERY_RETRY

with workflow.unsafe.imports_passed_through():
    from contracts.names import Activities
    from contracts.wire import AgentResponse, EmitInput

MAX_BATCH = 500  # messages per emit activity: keeps each payload far below Temporal's limits


class Outbox:
    def __init__(self, topic: str, request_id: str, bridge_queue: str, id_prefix: str) -> None:
        self._topic, self._request_id, self._queue, self._prefix = topic, request_id, bridge_queue, id_prefix
        self._seq = 0
        self._queued: list[AgentResponse] = []
        self._sender: asyncio.Task[None] | None = None

    def emit(self, response: AgentResponse) -> None:
        self._seq += 1
        # Stable per message: an emit retried after a timeout carries the same id, so clients dedupe.
        response.message_id = f"{self._prefix}#{self._seq}"
        self._queued.append(response)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send())

    async def _send(self) -> None:
        while self._queued:
            batch, self._queued = self._queued[:MAX_BATCH], self._queued[MAX_BATCH:]
            await workflow.execute_activity(
                Activities.EMIT,
                EmitInput(topic=self._topic, request_id=self._request_id, responses=batch),
                task_queue=self._queue,
                start_to_close_timeout=timedelta(seconds=30),
                schedule_to_close_timeout=timedelta(minutes=10),
                retry_policy=DELIVERY_RETRY,
            )

    async def flush(self) -> None:
        """Wait until every queued message is published (before the run may end)."""
        while self._sender is not None and not self._sender.done():
            await self._sender
