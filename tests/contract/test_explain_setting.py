"""The `explain` setting, read with TrustGraph's own client on the real broker, Temporal and FalkorDB: inline, each
entity's core reaches the caller and all of it the flow's triples store and the librarian; store-only, the store
and the librarian alone; off, nowhere. Each entity is written to the store, and each document to the librarian,
exactly once, off the caller's path: a worker that stops while it writes them leaves them to the next worker,
as it leaves the rest of the run, and the caller has its answer meanwhile."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from typing import Any

import pulsar
import pytest
from prometheus_client import CollectorRegistry
from temporalio.client import Client, WorkflowHandle

from backends.factory import make_backends
from contracts.explain_delivery import StoredEntity
from contracts.names import WORKFLOW_NAME, Activities, TaskQueues
from contracts.run import AgentRunInput, AgentRunResult
from contracts.topics import agent_response_topic, explainability_topic, librarian_topics
from contracts.wire import AgentRequest
from contracts.wire_codec import decode_response
from service.agent_metrics import AgentMetrics
from service.config import ServiceConfig
from service.connections import pulsar_client
from service.response_publisher import ResponsePublisher
from tests.agent_harness import agent_settings_for_tests
from tests.contract.test_explainability import dialog
from tests.contract.test_trustgraph_contract import (
    ANSWER,
    answers,
    tg_agent,  # noqa: F401 (a fixture)
)
from tests.scripted_llm import ScriptedLLM
from worker.families import FAMILIES, build_workers
from workflows.replay import replay

QUESTION = "Which supplier has the most purchase orders?"


class Written:
    """What reaches the flow's triples store and the workspace's librarian, read from the first message on."""

    def __init__(self, client: Any, response_topic: str) -> None:
        self.client, self.response_topic = client, response_topic
        self.stored: list[str] = []  # each Triples message's entity (metadata.id)
        self.triples: dict[str, int] = {}  # entity -> triples stored
        self.documents: list[str] = []  # each add-document request's document id

    async def __aenter__(self) -> Written:
        librarian, _ = librarian_topics(self.response_topic)  # type: ignore[misc]
        self._consumers = [
            await self.client.subscribe(
                explainability_topic(self.response_topic),
                f"store-{uuid.uuid4().hex[:8]}",
                initial_position=pulsar.InitialPosition.Latest,
            ),
            await self.client.subscribe(librarian, f"librarian-{uuid.uuid4().hex[:8]}"),
        ]
        self._tasks = [
            asyncio.create_task(self._read(c, kind)) for c, kind in zip(self._consumers, ("store", "doc"), strict=True)
        ]
        return self

    async def _read(self, consumer: Any, kind: str) -> None:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            body = json.loads(message.data())
            if kind == "store":
                self.stored.append(body["metadata"]["id"])
                self.triples[body["metadata"]["id"]] = len(body["triples"])
            else:
                self.documents.append(body["document_id"])

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.sleep(1)  # a write sent twice would have arrived by now
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def finished_run(client: Client, queue: str) -> WorkflowHandle[Any, Any]:
    """The one run on this test's task queue, once it has ended: it ends only after its trace is written."""
    for _ in range(150):
        async for run in client.list_workflows(f"TaskQueue = '{queue}'"):
            handle = client.get_workflow_handle(run.id)
            await handle.result()
            return handle
        await asyncio.sleep(0.2)
    raise TimeoutError("no run on the test's task queue")


def scheduled(history: Any, activity: str) -> int:
    return sum(
        1
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name == activity
    )


@pytest.mark.parametrize("explain", ["inline", "store-only", "off"])
async def test_the_explain_setting_says_where_the_trace_goes_and_each_write_happens_once(
    make_stack,
    tg_agent,  # noqa: F811
    explain: str,
) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, service={"explain": explain})
        client = pulsar_client(stack.config.pulsar_url)
        try:
            async with Written(client, stack.config.response_topic) as written:
                responses = await dialog(await tg_agent(stack), QUESTION)
                handle = await finished_run(stack.client, stack.config.queues.workflow)
        finally:
            await client.close()
    assert responses[-1].message_type == "answer" and responses[-1].content.startswith(ANSWER)
    explains = [r for r in responses if r.message_type == "explain"]
    history = await handle.fetch_history()
    session = f"urn:trustgraph:agent:{handle.id}"
    entities = [session, f"{session}/plan", f"{session}/step/0", f"{session}/synthesis"]
    documents = [f"{session}/step/0/doc", f"{session}/synthesis/doc"]
    if explain == "off":
        assert explains == [] and written.stored == [] and written.documents == []
        assert scheduled(history, Activities.STORE_EXPLAIN) == 0
        return
    # the store and the librarian get each entity and each document once, in the order the run explained them
    assert written.stored == entities and sorted(written.documents) == documents
    assert scheduled(history, Activities.STORE_EXPLAIN) == 1  # once the answer is out: no step waits for it
    if explain == "store-only":
        assert explains == []
    else:  # inline: the caller gets each entity once, its core: a fraction of what is stored
        assert [r.explain_id for r in explains] == entities
        assert all(0 < len(r.explain_triples) < written.triples[r.explain_id] for r in explains[1:])
        assert sum(len(r.explain_triples) for r in explains) * 3 < sum(written.triples.values())
    # the run, its trace's store included, replays on this code
    [outcome] = await replay([history])
    assert outcome.ok, outcome.error


class StoppedWhileWriting(ResponsePublisher):
    """A worker that stops while it writes a trace: its first write never finishes (the shutdown cancels it)."""

    writing: asyncio.Event

    async def store_explain(self, response_topic: str, collection: str, entities: list[StoredEntity]) -> None:
        self.writing.set()
        await asyncio.Event().wait()


async def start_workers(
    stack: AsyncExitStack, client: Client, config: ServiceConfig, publisher: ResponsePublisher
) -> None:
    metrics = AgentMetrics(CollectorRegistry())
    backends = make_backends(config, observer=metrics)
    stack.push_async_callback(backends.aclose)
    await backends.start()
    for worker in build_workers(client, config, set(FAMILIES), backends, metrics, publisher=publisher):
        await stack.enter_async_context(worker)


async def test_a_trace_written_when_the_worker_stopped_is_written_once_by_the_next_worker(
    temporal_env, pulsar_url: str, falkordb_url: str, unique: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    workspace = f"test-{unique}"
    topic = agent_response_topic(workspace, "default")
    config = ServiceConfig(
        pulsar_url=pulsar_url,
        falkordb_url=falkordb_url,
        graph_name="procurement",
        llm_model="scripted",
        agent=agent_settings_for_tests(),
        queues=TaskQueues().suffixed(unique),
        metrics_port=0,
        audit_path=str(tmp_path / "audit.jsonl"),
        workspace=workspace,
        trustgraph_config=False,
        graph_programs=False,  # the plan the test scripts is the one to run
    )
    client = pulsar_client(pulsar_url)
    caller = await client.subscribe(topic, f"caller-{unique}")
    with ScriptedLLM(answers) as llm:
        config = config.model_copy(update={"llm_base_url": llm.base_url})
        run_input = AgentRunInput(
            request=AgentRequest(question=QUESTION), request_id=unique, response_topic=topic, queues=config.queues
        )
        try:
            async with Written(client, topic) as written:
                first = AsyncExitStack()
                stalled = StoppedWhileWriting(client, pulsar_url)
                stalled.writing = asyncio.Event()
                first.push_async_callback(stalled.close)  # once its workers stopped
                await start_workers(first, temporal_env.client, config, stalled)
                handle = await temporal_env.client.start_workflow(
                    WORKFLOW_NAME,
                    run_input,
                    id=f"agent-{unique}",
                    task_queue=config.queues.workflow,
                    result_type=AgentRunResult,
                )
                # the caller gets the whole answer; then the trace's write hangs
                kinds = []
                while not kinds or kinds[-1] != "answer":
                    message = await asyncio.wait_for(caller.receive(), 30)
                    await caller.acknowledge(message)
                    kinds.append(decode_response(message.data()).message_type)
                await asyncio.wait_for(stalled.writing.wait(), 30)
                assert written.stored == []
                await first.aclose()  # the worker stops; the run waits for its trace
                async with AsyncExitStack() as second:
                    publisher = ResponsePublisher(client, pulsar_url)
                    second.push_async_callback(publisher.close)
                    await start_workers(second, temporal_env.client, config, publisher)
                    result = await asyncio.wait_for(handle.result(), 60)
        finally:
            await client.close()
    assert result.answer.startswith(ANSWER)
    session = f"urn:trustgraph:agent:agent-{unique}"
    assert written.stored == [session, f"{session}/plan", f"{session}/step/0", f"{session}/synthesis"]
    assert Counter(written.documents) == {f"{session}/step/0/doc": 1, f"{session}/synthesis/doc": 1}
