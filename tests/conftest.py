"""Fixtures that start the real parts on free ports and stop them: Temporal dev server, pulsar-lite,
FalkorDB. The LLM is the one part tests script (tests/scripted_llm.py), except the real_llm tests."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from falkordb.asyncio import FalkorDB
from prometheus_client import CollectorRegistry
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from backends.factory import make_backends
from bridge.relay import RequestRelay, Routing
from contracts.names import SEARCH_ATTRIBUTES, TaskQueues
from contracts.topics import agent_request_topic, agent_subscription
from embedded import demo_graph
from embedded.parts import DEV_SERVER_DYNAMIC_CONFIG, falkordb_server, pulsar_broker, temporal_binary
from embedded.processes import ManagedProcess, free_port
from service.agent_metrics import AgentMetrics
from service.config import McpServerConfig, ServiceConfig
from service.connections import pulsar_client
from service.defaults import PROCESSOR_ID
from service.response_publisher import ResponsePublisher
from tests.agent_harness import agent_settings_for_tests
from worker.families import FAMILIES, build_workers


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stack")


@pytest_asyncio.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        data_converter=pydantic_data_converter,
        port=free_port(),
        ui=False,
        dev_server_extra_args=[
            *(a for k, v in SEARCH_ATTRIBUTES.items() for a in ("--search-attribute", f"{k}={v}")),
            # the dev server as `up` starts it (embedded/parts.py)
            *(
                a
                for k, v in DEV_SERVER_DYNAMIC_CONFIG.items()
                for a in ("--dynamic-config-value", f"{k}={json.dumps(v)}")
            ),
        ],
    )
    yield env
    await env.shutdown()


async def _started(part: ManagedProcess, timeout_s: float = 60) -> ManagedProcess:
    part.start()
    try:
        await part.wait_ready(timeout_s)
    except BaseException:
        part.stop()
        raise
    return part


@pytest_asyncio.fixture(scope="session")
async def pulsar_url(data_dir: Path) -> AsyncIterator[str]:
    port = free_port()
    part = await _started(pulsar_broker(data_dir, port))
    yield f"pulsar://127.0.0.1:{port}"
    part.stop()


@pytest_asyncio.fixture(scope="session")
async def falkordb_url(data_dir: Path) -> AsyncIterator[str]:
    port = free_port()
    part = await _started(falkordb_server(data_dir, port))
    url = f"redis://127.0.0.1:{port}"
    await demo_graph.load(url, "procurement")
    yield url
    part.stop()


@dataclass
class Stack:
    """Worker families and bridge running in-process against the real servers."""

    config: ServiceConfig
    client: Client
    unique: str

    @property
    def request_topic(self) -> str:
        return self.config.request_topics[0]


@pytest.fixture
def unique() -> str:
    return uuid.uuid4().hex[:10]


@pytest_asyncio.fixture
async def make_stack(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
):  # type: ignore[no-untyped-def]
    """Factory: start_stack(llm_base_url, **agent_settings) -> Stack, torn down after the test.

    Topics and task queues are unique per test, so tests never see each other's messages."""
    stack = AsyncExitStack()
    audit_dir = tmp_path

    async def start(
        llm_base_url: str,
        graph_name: str = "procurement",
        routing: Routing | None = None,
        extra_request_topics: list[str] | None = None,
        tool_backend: str = "local",
        ontology_path: str = "",
        flow: str = "default",
        service: dict[str, Any] | None = None,
        mcp_servers: list[McpServerConfig] | None = None,
        graph_programs: bool = False,
        **agent: object,
    ) -> Stack:
        """`graph_programs` off by default: most tests script the plan the run is to follow, and code's
        program would take its place (tests/integration/test_program_plan.py tests the programs)."""
        queues = TaskQueues().suffixed(unique)
        workspace = f"test-{unique}"
        config = ServiceConfig(  # the flow's topics, as the bridge derives them, and any others asked for
            pulsar_url=pulsar_url,
            falkordb_url=falkordb_url,
            graph_name=graph_name,
            llm_base_url=llm_base_url,
            llm_model="scripted",
            request_topics=[agent_request_topic(workspace, flow), *(extra_request_topics or [])],
            agent=agent_settings_for_tests(**agent),
            queues=queues,
            metrics_port=0,
            audit_path=str(audit_dir / f"audit-{unique}.jsonl"),
            tool_backend=tool_backend,
            workspace=workspace,
            flow=flow,
            ontology_path=ontology_path,
            graph_programs=graph_programs,
            **({} if mcp_servers is None else {"mcp_servers": mcp_servers}),  # default: the demo server
        ).model_copy(update=service or {})  # `service`: other ServiceConfig fields (a FalkorDB URL, an API key)
        client = temporal_env.client
        metrics = AgentMetrics(CollectorRegistry())
        backends = make_backends(config, observer=metrics)  # as the worker makes them (worker/main.py)
        stack.push_async_callback(backends.aclose)
        await backends.start()
        pulsar_conn = pulsar_client(pulsar_url)
        stack.push_async_callback(pulsar_conn.close)
        publisher = ResponsePublisher(pulsar_conn, pulsar_url, processor=PROCESSOR_ID)
        workers = build_workers(client, config, set(FAMILIES), backends, metrics, publisher=publisher)
        for w in workers:
            await stack.enter_async_context(w)
        relay = RequestRelay(
            client,
            pulsar_conn,
            publisher,
            request_topics=config.request_topics,
            subscription=agent_subscription(workspace, flow),
            response_topic=config.response_topic,
            queues=queues,
            routing=routing,
        )
        await relay.subscribe()
        task = asyncio.create_task(relay.run())

        async def stop_relay() -> None:
            task.cancel()
            await relay.drain()

        stack.push_async_callback(stop_relay)
        return Stack(config=config, client=client, unique=unique)

    yield start
    await stack.aclose()


@pytest_asyncio.fixture
async def demo_copy(falkordb_url: str, unique: str) -> AsyncIterator[tuple[str, Any]]:
    """A private copy of the demo graph a test may change: (its name, a FalkorDB graph handle)."""
    name = f"demo-{unique}"
    await demo_graph.load(falkordb_url, name)
    db = FalkorDB.from_url(falkordb_url)
    yield name, db.select_graph(name)
    await db.select_graph(name).delete()
    await db.aclose()


@pytest.fixture
def scripted_llm() -> Iterator[type]:
    from tests.scripted_llm import ScriptedLLM

    yield ScriptedLLM


LAYERS = ("unit", "integration", "contract", "faults", "replay", "attacks")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test carries the marker of its layer (its directory), so `-m unit` and `pytest tests/unit` agree."""
    root = Path(__file__).parent
    for item in items:
        layer = item.path.relative_to(root).parts[0] if item.path.is_relative_to(root) else ""
        if layer in LAYERS:
            item.add_marker(getattr(pytest.mark, layer))


# Native clients (pulsar-client's C++ threads, Temporal's core runtime) can abort the interpreter while it
# finalizes ("terminate called without an active exception"), after every result was reported; seen once
# in CI with a pulsar client left open. Leaks are fixed where found; this keeps a finished run's exit code.
_session_status = {"code": 0}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _session_status["code"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_session_status["code"])
