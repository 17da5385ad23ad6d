"""A throwaway FalkorDB graph made by one CREATE query, deleted afterwards: the fixtures' common shape."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from falkordb.asyncio import FalkorDB


@asynccontextmanager
async def seeded_graph(falkordb_url: str, name: str, create: str) -> AsyncIterator[str]:
    db = FalkorDB.from_url(falkordb_url)
    await db.select_graph(name).query(create)
    try:
        yield name
    finally:
        await db.select_graph(name).delete()
        await db.aclose()
