"""The run's explain entities kept where TrustGraph keeps its agent's: the flow's triples store, and the
workspace's librarian for the documents behind step results and the answer. Off the caller's path: the
`store_explain` activity writes them once the run's last messages went out (the run awaits `flush` then, so it
does not end before: workflows/confidence_agent.py), and while the run waits for a human, what it explained so
far. Nothing the caller waits for, and no step, waits for it.

Why then, and not as each entity is explained: an activity's completion is an event the workflow must take in
a workflow task of its own, and a run that writes as it goes pays for several of those while its steps wait
for theirs (measured with bench/trustgraph_side_by_side.py: a 3-step run at zero delay took about 30 ms longer
than with `explain: off`; written at its end, no longer than that); at its end it pays once, after the caller
has the answer.

Why a regular activity of its own:
- the `publish` local activity must not do these writes: a local activity holds back the commands of the workflow
  task it runs in (the next step's activities among them) until it returns, so every write there delays the run;
- it must not start them in the background and return either: its result is recorded once it returned, so a
  worker that dies before the writes are done loses them, and a replay never makes them again;
- a regular activity is recorded in the history when it is scheduled, runs on its own (on this worker, eagerly,
  by default) and is retried by the server, by another worker after a restart too, for up to ten minutes, as
  every activity of the run is; a local activity would hold its workflow task open meanwhile (while the run
  waits for a human, the wait's own commands). Each entity is in exactly one batch the history records; its
  writes are idempotent where a retry repeats them (the store merges the same triples, the librarian keeps the
  document it has).

In the order the run explained them, one batch at a time: the plan's message reaches the store before its
steps', which is how TrustGraph's trace reader comes to list the steps in plan order (workflows/explain_trace.py).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows.activity_options import DELIVERY_RETRY
from workflows.errors import failure_message

with workflow.unsafe.imports_passed_through():
    from contracts.explain import Explained
    from contracts.explain_delivery import StoreBatch
    from contracts.names import Activities

MAX_BATCH = 100  # entities per activity: keeps each input (kept in the history) small


class ExplainStore:
    def __init__(self, response_topic: str, collection: str, task_queue: str, notes: list[str]) -> None:
        self._response_topic, self._collection = response_topic, collection
        self._task_queue = task_queue  # the workflows family's: the worker that publishes the run's messages
        self._notes = notes  # the run's record says when entities could not be kept
        self._queued: list[Explained] = []
        self._writer: asyncio.Task[None] | None = None
        self.at_once = False  # write each entity as it is kept (while the run waits for a human)

    def keep(self, entities: list[Explained]) -> None:
        """Store these after those kept before them, when the run writes its trace (write); returns at once."""
        self._queued.extend(entities)
        if self.at_once:
            self.write()

    def write(self) -> None:
        """Start writing what was kept (unless a write is under way, which takes it along); returns at once."""
        if self._queued and (self._writer is None or self._writer.done()):
            self._writer = asyncio.create_task(self._write())

    async def _write(self) -> None:
        while self._queued:
            batch, self._queued = self._queued[:MAX_BATCH], self._queued[MAX_BATCH:]
            try:
                await workflow.execute_activity(
                    Activities.STORE_EXPLAIN,
                    StoreBatch(response_topic=self._response_topic, collection=self._collection, entities=batch),
                    task_queue=self._task_queue,
                    start_to_close_timeout=timedelta(seconds=30),
                    schedule_to_close_timeout=timedelta(minutes=10),
                    retry_policy=DELIVERY_RETRY,
                    summary=f"store {len(batch)} explain entities",
                )
            except ActivityError as exc:  # the answer went out: a trace the store lacks does not fail the run
                self._notes.append(f"{len(batch)} explain entities were not stored: {failure_message(exc)}")
                workflow.logger.warning("explain entities not stored: %s", failure_message(exc))

    async def flush(self) -> None:
        """Write every entity kept so far, and wait until it is written (or given up)."""
        self.write()
        while self._writer is not None and not self._writer.done():
            await self._writer
