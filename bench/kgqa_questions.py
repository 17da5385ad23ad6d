"""Labelled questions for a graph, from its live schema and data alone (bench/kgqa/schema_questions.py): one
JSON line per question, with its gold answer and the reference query the gold came from.

    .venv/bin/python bench/kgqa_questions.py --graph geonames --seed 1 --out geonames-1.jsonl
    .venv/bin/python bench/kgqa_questions.py --graph all --seed 1 --out-dir questions/
    .venv/bin/python bench/kgqa_questions.py --url redis://127.0.0.1:6379 --graph-name mygraph --out mine.jsonl

Without --url, a FalkorDB of its own is started (the embedded one, in a temporary directory) and the public graph
(bench/graphs/registry.py) is loaded into it. With --url, any existing graph is read as it is (--graph-name).
A new seed gives a new set: final figures come from a set generated after the code was frozen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from falkordb.asyncio import FalkorDB

from bench.graphs.registry import GRAPHS, load_graph
from bench.kgqa.questions import Question
from bench.kgqa.schema_questions import QUOTAS, generate
from bench.kgqa.snapshot import read_snapshot


@asynccontextmanager
async def own_falkordb() -> AsyncIterator[str]:
    from embedded.parts import falkordb_server
    from embedded.processes import free_port

    port = free_port()
    part = falkordb_server(Path(tempfile.mkdtemp(prefix="tgca-questions-")), port)
    part.start()
    try:
        await part.wait_ready(60)
        yield f"redis://127.0.0.1:{port}"
    finally:
        part.stop()


async def questions_for(
    url: str, graph_name: str, prefix: str, seed: int, scale: float = 1.0
) -> tuple[list[Question], dict[str, int]]:
    db = FalkorDB.from_url(url, socket_connect_timeout=5)
    try:
        graph = db.select_graph(graph_name)
        snap = await read_snapshot(graph)
        quotas = {c: max(1, round(q * scale)) for c, q in QUOTAS.items()}
        return await generate(graph, snap, prefix, seed, quotas)
    finally:
        await db.aclose()


def write(path: Path, graph: str, seed: int, questions: list[Question]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for q in questions:
            out.write(
                json.dumps(
                    {"id": q.id, "graph": graph, "seed": seed, "category": q.category, "text": q.text, "gold": q.gold},
                    ensure_ascii=False,
                )
                + "\n"
            )


def read(path: Path) -> tuple[str, list[Question]]:
    """The graph a questions file is about, and its questions."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    graphs = {r["graph"] for r in rows}
    if len(graphs) != 1:
        raise ValueError(f"{path}: questions about {len(graphs)} graphs; one file holds one graph's")
    return graphs.pop(), [Question(r["id"], r["category"], r["text"], r["gold"]) for r in rows]


def report(graph: str, questions: list[Question], short: dict[str, int], path: Path) -> None:
    counts = Counter(q.category for q in questions)
    print(
        f"{graph}: {len(questions)} questions in {path} ({', '.join(f'{c} {n}' for c, n in counts.items())})"
        + (f"; fewer than asked: {', '.join(f'{c} -{n}' for c, n in short.items())}" if short else ""),
        flush=True,
    )


async def main_async(args: argparse.Namespace) -> int:
    if args.url:
        questions, short = await questions_for(
            args.url, args.graph_name, f"{args.graph_name}-s{args.seed}", args.seed, args.scale
        )
        write(args.out, args.graph_name, args.seed, questions)
        report(args.graph_name, questions, short, args.out)
        return 0
    names = list(GRAPHS) if args.graph == "all" else [args.graph]
    async with own_falkordb() as url:
        for name in names:
            await load_graph(name, url)
            # the seed in every id: no two sets (nor the hand-written ones) share an id
            questions, short = await questions_for(url, name, f"{name}-s{args.seed}", args.seed, args.scale)
            path = args.out if args.graph != "all" else args.out_dir / f"{name}-seed{args.seed}.jsonl"
            write(path, name, args.seed, questions)
            report(name, questions, short, path)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", choices=[*GRAPHS, "all"], help="a public graph, loaded into a FalkorDB of its own")
    p.add_argument("--url", help="an existing FalkorDB to read (with --graph-name)")
    p.add_argument("--graph-name", help="with --url: the graph to read")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--scale", type=float, default=1.0, help="multiply every category's quota (default 1: ~400)")
    p.add_argument("--out", type=Path, help="the questions file (one graph)")
    p.add_argument("--out-dir", type=Path, default=Path("."), help="with --graph all: one file per graph here")
    args = p.parse_args()
    if bool(args.url) == bool(args.graph) or (args.url and not args.graph_name):
        p.error("give --graph NAME (a public graph), or --url and --graph-name (a graph that is there already)")
    if args.graph != "all" and not args.out:
        p.error("--out is needed for one graph")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
