"""TrustGraph 2.11.1's own trace reader (`trustgraph.api.ExplainabilityClient`: what `tg-list-explain-traces`,
`tg-show-explain-trace` and `tg-invoke-agent -x` call) over explain triples a test collected from a flow's triples
store topic, for tests that run no gateway and no triples store. The reader runs in .venv-trustgraph (this project's
venv has trustgraph-base without the API client's dependencies), as this file run as a script: the triples come in
on stdin, and the store it reads is a list answering `triples_query` as TrustGraph's triples query service does
(every triple matching the given subject, predicate, object, graph and collection, in the order they were written,
up to `limit`). Only the store is stood in for; what the reader follows, lists and skips is TrustGraph's.

    read_traces(triples, sessions, entities) -> {"listed": [...], "traces": {...}, "entities": {...}}
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TRUSTGRAPH_PYTHON = Path(__file__).resolve().parent.parent / ".venv-trustgraph" / "bin" / "python"
GRAPH = "urn:graph:retrieval"


async def read_traces(
    stored: list[dict[str, Any]], sessions: Sequence[str] = (), entities: Sequence[str] = ()
) -> dict[str, Any]:
    """`stored`: TrustGraph `Triples` messages as their JSON carries them (metadata.collection, triples). What the
    reader lists as top-level sessions (`listed`, list_sessions), each of `sessions`' trace (`traces`,
    fetch_agent_trace: each step's type and URI; a sub-trace as {"type": "sub-trace", "question": ..., "synthesis":
    ...}) and the type it reads each of `entities` as (fetch_entity)."""
    payload = json.dumps({"stored": stored, "sessions": list(sessions), "entities": list(entities)}).encode()
    process = await asyncio.create_subprocess_exec(
        str(TRUSTGRAPH_PYTHON),
        "-P",
        __file__,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PYTHONPATH": ""},
    )
    out, err = await asyncio.wait_for(process.communicate(payload), 120)
    if process.returncode != 0:
        raise RuntimeError(f"TrustGraph's trace reader failed: {err.decode(errors='replace')[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    return result


def _term(term: dict[str, Any]) -> tuple[str, str]:
    kind = term.get("type") or term.get("t") or ""
    if kind == "i":
        return "i", term.get("iri") or term.get("i") or ""
    return "l", term.get("value") or term.get("v") or ""


class _Store:
    """The triples, answering `triples_query` as a flow's triples query service answers it."""

    def __init__(self, stored: list[dict[str, Any]]) -> None:
        self.rows: list[tuple[str, str, tuple[str, str], str, str]] = []
        for message in stored:
            collection = (message.get("metadata") or {}).get("collection") or "default"
            for t in message.get("triples") or []:
                row = (_term(t["s"])[1], _term(t["p"])[1], _term(t["o"]), t.get("g") or "", collection)
                if row not in self.rows:  # the store keeps a triple once, however often it was sent
                    self.rows.append(row)

    def triples_query(
        self,
        s: str | None = None,
        p: str | None = None,
        o: str | None = None,
        g: str | None = None,
        collection: str | None = None,
        limit: int = 100,
        **_: Any,
    ) -> list[dict[str, Any]]:
        found = []
        for rs, rp, (kind, ro), rg, rc in self.rows:
            if (s and rs != s) or (p and rp != p) or (o and ro != o) or (g and rg != g):
                continue
            if collection and rc != collection:
                continue
            value = {"t": "i", "i": ro} if kind == "i" else {"t": "l", "v": ro}
            found.append({"s": {"t": "i", "i": rs}, "p": {"t": "i", "i": rp}, "o": value})
            if len(found) >= limit:
                break
        return found


def _step(step: Any) -> dict[str, Any]:
    if isinstance(step, dict):  # a sub-trace: a RAG session linked under an agent step
        synthesis = step["trace"].get("synthesis")
        return {"type": "sub-trace", "question": step["question"].uri, "synthesis": synthesis.uri if synthesis else ""}
    return {"type": type(step).__name__, "uri": step.uri}


def _main() -> None:
    from trustgraph.api import ExplainabilityClient

    asked = json.load(sys.stdin)
    reader = ExplainabilityClient(_Store(asked["stored"]), retry_delay=0.0, max_retries=2)
    listed = [q.uri for q in reader.list_sessions(graph=GRAPH, collection="default", limit=500)]
    traces = {
        session: [_step(s) for s in reader.fetch_agent_trace(session, graph=GRAPH, collection="default")["steps"]]
        for session in asked["sessions"]
    }
    entities = {}
    for uri in asked["entities"]:
        entity = reader.fetch_entity(uri, graph=GRAPH, collection="default")
        entities[uri] = type(entity).__name__ if entity is not None else ""
    json.dump({"listed": listed, "traces": traces, "entities": entities}, sys.stdout)


if __name__ == "__main__":
    _main()
