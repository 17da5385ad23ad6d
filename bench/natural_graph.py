"""Serve one benchmark graph in a FalkorDB of its own, for writing and checking questions by hand: the demo graph
(`procurement`) or any public graph of bench/graphs/registry.py, loaded under its own name.

    .venv/bin/python bench/natural_graph.py --graph airports --port 6391      # prints the URL, serves until Ctrl-C
    .venv/bin/python bench/natural_graph.py --graph airports --port 6391 --schema   # ... and prints the schema

The question files written against it are checked by bench/natural_questions.py.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from falkordb.asyncio import FalkorDB

from bench.graphs.registry import GRAPHS, load_graph

NAMES = ("procurement", *GRAPHS)


async def load_named(name: str, url: str) -> None:
    """Write graph `name` (the demo graph or a public one) into the FalkorDB at `url`, replacing it."""
    if name == "procurement":
        from embedded import demo_graph

        await demo_graph.load(url, "procurement", replace=True)
    else:
        await load_graph(name, url, replace=True)


async def schema_text(url: str, name: str) -> str:
    """Each label with its count and keys, and each relationship type with the labels it joins and its count."""
    db = FalkorDB.from_url(url)
    graph = db.select_graph(name)
    lines = []
    labels = await graph.query("MATCH (n) UNWIND labels(n) AS l RETURN l, count(*) ORDER BY l")
    for label, n in labels.result_set:
        keys = await graph.query(f"MATCH (n:`{label}`) UNWIND keys(n) AS k RETURN DISTINCT k ORDER BY k")
        lines.append(f"(:{label}) x{n}: {', '.join(k for (k,) in keys.result_set)}")
    rels = await graph.query(
        "MATCH (a)-[r]->(b) RETURN labels(a)[0], type(r), labels(b)[0], count(*), "
        "collect(DISTINCT keys(r))[0] ORDER BY type(r)"
    )
    for a, t, b, n, keys in rels.result_set:
        lines.append(f"(:{a})-[:{t}]->(:{b}) x{n}" + (f" props: {', '.join(keys)}" if keys else ""))
    await db.aclose()
    return "\n".join(lines)


async def serve(name: str, port: int, show_schema: bool) -> int:
    from embedded.parts import falkordb_server

    part = falkordb_server(Path(tempfile.mkdtemp(prefix=f"tgca-natural-{name}-")), port)
    part.start()
    try:
        await part.wait_ready(60)
        url = f"redis://127.0.0.1:{port}"
        await load_named(name, url)
        print(f"graph {name} at {url}", flush=True)
        if show_schema:
            print(await schema_text(url, name), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        return 0
    finally:
        part.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", choices=NAMES, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--schema", action="store_true", help="print the labels, keys and relationship types once loaded")
    args = p.parse_args()
    return asyncio.run(serve(args.graph, args.port, args.schema))


if __name__ == "__main__":
    sys.exit(main())
