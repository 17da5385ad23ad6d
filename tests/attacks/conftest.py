"""Attack tests use the same real parts as the integration tests: the session-wide servers come from
tests/conftest.py, the time-skipping server and the scripted-LLM harness from the integration layer. The
read-only attacks share a scratch graph and a listener that counts LOAD CSV fetches."""

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from tests.attacks.scratch_graph import FetchListener, ScratchGraph
from tests.integration.conftest import harness_factory, seed_graph, skipping_env

__all__ = ["harness_factory", "seed_graph", "skipping_env"]


@pytest_asyncio.fixture
async def scratch(falkordb_url: str, unique: str) -> AsyncIterator[ScratchGraph]:
    graph = ScratchGraph(falkordb_url, f"scratch-{unique}")
    await graph.create()
    yield graph
    await graph.aclose()


@pytest.fixture
def listener() -> Iterator[FetchListener]:
    found = FetchListener()
    yield found
    found.close()
