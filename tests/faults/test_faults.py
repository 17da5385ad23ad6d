"""Fault injection with real processes: the worker SIGKILLed mid-run and restarted, the Temporal dev server
restarted mid-run (SQLite persistence), the LLM down. Every request completes or gets a clear error, and
a step that completed never runs again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cli.ask import ask
from contracts.names import SEARCH_ATTRIBUTES
from contracts.wire import AgentRequest, AgentResponse
from embedded.parts import pulsar_broker, temporal_server
from embedded.processes import ManagedProcess, free_port
from service.run_recovery import RunLookup
from tests.ready_checks import logged
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis

pytestmark = pytest.mark.slow

PLAN = json.dumps(
    {
        "steps": [
            {
                "id": "s1",
                "function": "GraphQuery",
                "dependencies": [],
                "arguments": {"query": "MATCH (s:Supplier) RETURN count(s) AS suppliers"},
            },
            {"id": "s2", "function": "TextCompletion", "dependencies": ["s1"], "arguments": {"prompt": "Say how many"}},
        ]
    }
)


@dataclass
class SlowLLM:
    """Counts calls by kind; synthesis waits on `release` so a test can strike while it is in flight."""

    calls: dict[str, int] = field(default_factory=lambda: {"plan": 0, "text": 0, "synthesis": 0})
    synthesis_started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            self.calls["plan"] += 1
            return 200, PLAN
        if is_synthesis(body):
            self.calls["synthesis"] += 1
            self.synthesis_started.set()
            self.release.wait(30)
            return 200, "There are 26 suppliers."
        self.calls["text"] += 1
        return 200, "There are 26 suppliers in the graph."


@dataclass
class Deployment:
    env: dict[str, str]
    data: Path
    temporal: ManagedProcess
    worker: ManagedProcess
    bridge: ManagedProcess
    broker: ManagedProcess | None = None

    def new_worker(self) -> ManagedProcess:
        self.worker = ManagedProcess(
            "worker", [sys.executable, "-m", "worker"], self.data / "worker2.log", env=self.env
        )
        self.worker.start()
        return self.worker

    def new_bridge(self) -> ManagedProcess:
        self.bridge = ManagedProcess(
            "bridge", [sys.executable, "-m", "bridge"], self.data / "bridge2.log", env=self.env
        )
        self.bridge.start()
        return self.bridge

    async def ask(self, question: str, topic: int = 0) -> list[AgentResponse]:
        """Every response (ask() drops repeated deliveries, known by their delivery_id)."""
        request = AgentRequest(question=question)
        return [
            m
            async for m in ask(
                self.env["TGCA_PULSAR_URL"],
                request,
                request_topic=json.loads(self.env["TGCA_REQUEST_TOPICS"])[topic],
                response_topic=self.env["TGCA_RESPONSE_TOPIC"],
                timeout_s=120,
                runs=RunLookup(address=self.env["TGCA_TEMPORAL_ADDRESS"]),
            )
        ]


@pytest_asyncio.fixture
async def deploy(pulsar_url: str, falkordb_url: str, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[Deployment] = []

    async def make(llm_url: str, own_broker: bool = False, **extra_env: str) -> Deployment:
        unique = uuid.uuid4().hex[:8]
        port = free_port()
        broker = None
        broker_url = pulsar_url
        if own_broker:  # a broker this test may restart
            broker_port = free_port()
            broker = pulsar_broker(tmp_path / "broker", broker_port)
            broker.start()
            await broker.wait_ready(30)
            broker_url = f"pulsar://127.0.0.1:{broker_port}"
        temporal = temporal_server(tmp_path / "temporal", port, free_port(), SEARCH_ATTRIBUTES)
        temporal.start()
        await temporal.wait_ready(90)
        env = {
            "TGCA_TEMPORAL_ADDRESS": f"127.0.0.1:{port}",
            "TGCA_PULSAR_URL": broker_url,
            "TGCA_FALKORDB_URL": falkordb_url,
            "TGCA_LLM_BASE_URL": llm_url,
            "TGCA_LLM_MODEL": "scripted",
            "TGCA_GRAPH_PROGRAMS": "false",  # the scripted plan is the one to run, not code's program
            "TGCA_MCP_SERVERS": "[]",
            "TGCA_METRICS_PORT": "0",
            "TGCA_AUDIT_PATH": str(tmp_path / "audit.jsonl"),
            "TGCA_REQUEST_TOPICS": json.dumps(
                [
                    f"non-persistent://tg/request/agent:fault-{unique}:default",
                    f"persistent://tg/flow/agent:fault-{unique}:default",
                ]
            ),
            "TGCA_RESPONSE_TOPIC": f"non-persistent://tg/response/agent:fault-{unique}:default",
            "TGCA_WORKSPACE": f"fault-{unique}",
            "TGCA_AGENT__OPEN_ACTIONS": "true",  # a test deployment without identities: actions stay open
            **extra_env,
        }
        worker = ManagedProcess("worker", [sys.executable, "-m", "worker"], tmp_path / "worker.log", env=env)
        bridge = ManagedProcess("bridge", [sys.executable, "-m", "bridge"], tmp_path / "bridge.log", env=env)
        worker.ready, bridge.ready = logged("worker_ready"), logged("bridge_ready")
        worker.start()
        bridge.start()
        await asyncio.gather(worker.wait_ready(60), bridge.wait_ready(60))
        deployment = Deployment(env, tmp_path, temporal, worker, bridge, broker)
        started.append(deployment)
        return deployment

    yield make
    for d in started:
        for part in (d.bridge, d.worker, d.temporal, d.broker):
            if part is not None:
                part.stop()


async def test_worker_killed_mid_run_restarts_and_no_completed_step_runs_again(deploy) -> None:
    llm = SlowLLM()
    with ScriptedLLM(llm) as server:
        # A short activity timeout, so the synthesis lost with the killed worker is retried in seconds.
        d = await deploy(server.base_url, TGCA_AGENT__PLANNING_TIMEOUT_MS="4000")
        asking = asyncio.create_task(d.ask("How many suppliers are there?"))
        assert await asyncio.to_thread(llm.synthesis_started.wait, 60)
        os.kill(d.worker.pid, signal.SIGKILL)  # mid-synthesis: plan, s1 and s2 are done
        d.worker.process.wait(10)
        llm.release.set()
        d.new_worker()
        messages = await asyncio.wait_for(asking, 90)
    assert messages[-1].message_type == "answer" and "There are 26 suppliers." in messages[-1].content
    assert llm.calls["plan"] == 1 and llm.calls["text"] == 1  # completed work was not repeated
    assert llm.calls["synthesis"] == 2  # the interrupted activity ran again on the new worker
    assert_delivered_in_order(messages)  # messages published by the killed worker and by the new one


def assert_delivered_in_order(messages: list[AgentResponse]) -> None:
    """At least once, in order: every delivery id of the run arrives, first sightings in sequence, and a
    repeat (published again after a crash) is the same message, so a client that drops it loses nothing."""
    first: dict[str, AgentResponse] = {}
    for m in messages:
        assert first.setdefault(m.delivery_id, m) == m
    numbers = [int(i.rsplit("#", 1)[1]) for i in first]
    assert numbers == list(range(1, len(numbers) + 1))


async def test_temporal_restarted_mid_run_and_the_run_completes(deploy) -> None:
    llm = SlowLLM()
    with ScriptedLLM(llm) as server:
        d = await deploy(server.base_url)
        asking = asyncio.create_task(d.ask("How many suppliers are there?"))
        assert await asyncio.to_thread(llm.synthesis_started.wait, 60)
        d.temporal.stop()  # the dev server goes away with the run mid-flight ...
        await asyncio.sleep(1)
        llm.release.set()
        d.temporal.start()  # ... and comes back on the same SQLite file
        await d.temporal.wait_ready(90)
        started = time.monotonic()
        messages = await asyncio.wait_for(asking, 110)
    assert messages[-1].message_type == "answer", [m.content for m in messages]
    assert time.monotonic() - started < 110


async def test_llm_down_steps_retry_then_a_clear_error_reaches_the_caller(make_stack) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    stack = await make_stack(dead, max_retries=2)
    messages = [
        m
        async for m in ask(
            stack.config.pulsar_url,
            AgentRequest(question="Anything?"),
            request_topic=stack.request_topic,
            response_topic=stack.config.response_topic,
            timeout_s=60,
            runs=RunLookup(stack.client),
        )
    ]
    final = messages[-1]
    assert final.message_type == "error" and final.error is not None
    assert f"LLM at {dead.removesuffix('/v1')} is unreachable" in final.content  # shown as scheme://host:port


async def test_bridge_killed_mid_stream_the_worker_still_delivers_every_message(deploy) -> None:
    llm = SlowLLM()
    with ScriptedLLM(llm) as server:
        d = await deploy(server.base_url)
        asking = asyncio.create_task(d.ask("How many suppliers are there?"))
        assert await asyncio.to_thread(llm.synthesis_started.wait, 60)
        os.kill(d.bridge.pid, signal.SIGKILL)  # it started the run; the run's messages never pass through it
        d.bridge.process.wait(10)
        llm.release.set()  # the answer is published with no bridge running at all
        messages = await asyncio.wait_for(asking, 90)
    assert messages[-1].message_type == "answer"
    assert_delivered_in_order(messages)


async def test_broker_restart_the_bridge_reconnects_and_persistent_requests_are_not_lost(deploy) -> None:
    llm = SlowLLM()
    llm.release.set()
    with ScriptedLLM(llm) as server:
        d = await deploy(server.base_url, own_broker=True)
        assert d.broker is not None
        first = await d.ask("How many suppliers are there?", topic=1)
        assert first[-1].message_type == "answer"
        d.broker.stop()  # the broker goes down and comes back on the same data
        d.broker.start()
        await d.broker.wait_ready(30)
        # The same bridge reconnects its consumer and producer: a request now is answered.
        after_restart = await d.ask("And after the restart?", topic=1)
        assert after_restart[-1].message_type == "answer"
        # A request on the persistent topic while the bridge is down is kept until a bridge takes it.
        os.kill(d.bridge.pid, signal.SIGKILL)
        d.bridge.process.wait(10)
        asking = asyncio.create_task(d.ask("How many suppliers are there now?", topic=1))
        await asyncio.sleep(2)
        d.new_bridge()
        messages = await asyncio.wait_for(asking, 90)
    assert messages[-1].message_type == "answer", [m.content for m in messages]


@pytest.mark.parametrize("group_size", ["1", "2"], ids=["one-per-activity", "groups-of-2"])
async def test_worker_killed_mid_batch_applies_every_action_exactly_once(
    deploy, falkordb_url: str, group_size: str
) -> None:
    """24 submissions, 4 at a time, 300 ms each: the worker dies with some applied and some in flight. The
    restarted worker replays the batch; each order is submitted once and reported as succeeded, whether each
    activity executed one order or a group of them."""
    from falkordb.asyncio import FalkorDB

    from embedded import demo_graph
    from tests.scripted_llm import is_action_planning, is_routing

    orders = [o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "draft"][:24]
    assert len(orders) == 24
    graph_name = f"fault-batch-{uuid.uuid4().hex[:8]}"
    await demo_graph.load(falkordb_url, graph_name)
    db = FalkorDB.from_url(falkordb_url)
    g = db.select_graph(graph_name)

    def model(body: dict[str, Any]) -> tuple[int, str]:
        if is_routing(body):
            return 200, json.dumps({"intent": "ACTION"})
        if is_action_planning(body):
            return 200, json.dumps(
                {
                    "entity_type": "PurchaseOrder",
                    "action_name": "submit",
                    "entity_ids": orders,
                    "related_class": "",
                    "related_name": "",
                }
            )
        return 200, "ok"

    async def applied() -> int:
        return (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]

    try:
        with ScriptedLLM(model) as server:
            d = await deploy(
                server.base_url,
                TGCA_GRAPH_NAME=graph_name,
                TGCA_ONTOLOGY_PATH=str(demo_graph.ONTOLOGY_PATH),
                TGCA_ACTION_LATENCY_MS="300",
                TGCA_AGENT__ACTION_APPROVAL_ABOVE="1000",
                TGCA_AGENT__ACTION_MAX_CONCURRENT="4",
                TGCA_AGENT__ACTION_GROUP_SIZE=group_size,
            )
            asking = asyncio.create_task(d.ask(f"Submit orders {', '.join(orders)}"))  # the ids it targets
            for _ in range(600):
                if await applied() >= 4:
                    break
                await asyncio.sleep(0.05)
            os.kill(d.worker.pid, signal.SIGKILL)  # mid-batch: some applied, some in flight, most not started
            d.worker.process.wait(10)
            at_kill = await applied()
            d.new_worker()
            messages = await asyncio.wait_for(asking, 120)
        assert 4 <= at_kill < 24
        assert "submit on 24 PurchaseOrder entities: 24 succeeded, 0 failed." in messages[-1].content
        keys = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r), count(DISTINCT r.entity_id)")).result_set
        assert keys == [[24, 24]]  # one record per order: none applied twice
        statuses = (
            await g.ro_query(
                "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": orders}
            )
        ).result_set
        assert statuses == [["submitted"]]
    finally:
        await g.delete()
        await db.aclose()
