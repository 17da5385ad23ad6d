"""How far down the enumerated programs the right one stands, with no model at all: for each labelled question
the programs cypher/walk_space.py enumerates from the question's reading and the live schema, in the order code
ranks them, are run on the real graph until one gives the gold answer. Reported by category: the share whose
right program is first (what code alone would answer), among the first 3 and the first 12 (what a model
choosing among those could answer), and anywhere in the enumeration. A miss at "anywhere" is the enumeration's;
a miss at 1 that is a hit at 12 is left to the choice.

    .venv/bin/python bench/walk_recall.py --questions /tmp/d51/countries-seed2.jsonl
    .venv/bin/python bench/walk_recall.py --questions q.jsonl --categories multi-hop set --out recall.jsonl

Only FalkorDB runs (its own, in a temporary directory, with the public graph loaded): minutes, not hours.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends.graph_store import GraphQueryError, GraphStore
from backends.grounding import ground
from backends.schema_check import SchemaCheck
from bench.kgqa.questions import Question
from bench.kgqa.scoring import is_correct
from bench.kgqa_questions import own_falkordb, read
from bench.natural_graph import load_named
from bench.query_writers import rows_text
from cypher.programs import RANKINGS, Program
from tools.link_judge import judge_links
from tools.program_chooser import LinkJudge, ranked_programs_on

DEPTH = 40  # programs run per question before it counts as not found


def answered_rows(program: Program, rows: list[list[Any]]) -> list[list[Any]]:
    """The rows an answer gives: of a ranking asked with no number ("which has the most"), the first and those
    tied with it, as the answer names them (confidence/answer_fit.py); the rows after show how close the rest
    came and are no part of the answer."""
    if program.intent.answer not in RANKINGS or program.intent.top or not rows:
        return rows
    return [row for row in rows if row[-1] == rows[0][-1]]


CUTS = (1, 3, 12, DEPTH)


async def rank_of_right(
    graph: GraphStore, schema: SchemaCheck, q: Question, judge: LinkJudge | None = None
) -> dict[str, Any]:
    """The 1-based rank of the first program whose rows give the gold answer (None: not among DEPTH), and the
    first program, for the record."""
    grounding = await ground(q.text, graph)
    reading, _, ranked = await ranked_programs_on(q.text, grounding, graph, schema, DEPTH, judge)
    first = ranked[0].query if ranked else ""
    linking = reading.linking
    read = {
        "linked": [f"{link.words}={link.term.name}" for link in linking.links if link.by != "spelling"]
        if linking
        else [],
        "unexplained": list(linking.unexplained) if linking else [],
    }
    for rank, program in enumerate(ranked, start=1):
        try:
            rows = (await graph.ro_query(program.query, timeout_ms=10_000, max_rows=200)).rows
        except GraphQueryError:
            continue
        if is_correct(rows_text(answered_rows(program, rows)), q.gold):
            return {"rank": rank, "right": program.query, "first": first, "shown": len(ranked), **read}
    return {"rank": None, "first": first, "shown": len(ranked), **read}


@asynccontextmanager
async def link_judge(wanted: bool) -> AsyncIterator[LinkJudge | None]:
    """With `wanted`, the local model (its own server) judging the links the vectors leave open."""
    if not wanted:
        yield None
        return
    from backends.llm import LLMClient
    from embedded.model_weights import resolve_model
    from embedded.parts import llm_server
    from embedded.processes import free_port
    from service.prompts import PromptTemplates

    port = free_port()
    server = llm_server(Path(tempfile.mkdtemp(prefix="tgca-walk-recall-")), resolve_model().path, port, "local")
    server.start()
    try:
        await server.wait_ready(300)
        backends = SimpleNamespace(
            llm=LLMClient(f"http://127.0.0.1:{port}/v1", "local"), prompts=PromptTemplates.load()
        )
        yield partial(judge_links, backends=backends)
    finally:
        server.stop()


async def main(args: argparse.Namespace) -> int:
    dataset, every = read(args.questions)
    questions = [q for q in every if q.category in args.categories or not args.categories][: args.limit]
    questions = [q for q in questions if q.gold["kind"] != "absent"]  # no program answers a thing that is not there
    command = " ".join([".venv/bin/python", "bench/walk_recall.py", *(shlex.quote(a) for a in sys.argv[1:])])
    out = args.out.open("w") if args.out else None
    tally: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
    async with own_falkordb() as url, link_judge(args.judge) as judge:
        await load_named(dataset, url)
        graph = GraphStore(url, dataset)
        schema = SchemaCheck(graph)
        started = time.monotonic()
        for q in questions:
            found = await rank_of_right(graph, schema, q, judge)
            t = tally[q.category]
            t["n"] += 1
            for cut in CUTS:
                t[cut] += found["rank"] is not None and found["rank"] <= cut
            if out:
                out.write(json.dumps({"id": q.id, "category": q.category, "question": q.text, **found}) + "\n")
            if args.verbose:
                said = f" | unexplained {', '.join(found['unexplained'])}" if found["unexplained"] else ""
                print(f"{q.id}: rank {found['rank']} | {q.text}{said}", flush=True)
        seconds = time.monotonic() - started
    print(f"\n{command}\n{len(questions)} questions in {seconds:.0f} s\n")
    print("| category | questions | first | among 3 | among 12 | among 40 |")
    print("|---|---|---|---|---|---|")
    totals: dict[Any, int] = defaultdict(int)
    for category, t in sorted(tally.items()):
        for k, v in t.items():
            totals[k] += v
        print(f"| {category} | {t['n']} | " + " | ".join(str(t[c]) for c in CUTS) + " |")
    print(f"| all | {totals['n']} | " + " | ".join(str(totals[c]) for c in CUTS) + " |")
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--questions", type=Path, required=True, help="a generated questions file (one graph)")
    p.add_argument("--categories", nargs="*", default=[], help="only these categories")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--out", type=Path, default=None, help="each question's rank (JSON lines)")
    p.add_argument("--verbose", action="store_true", help="print each question's rank as it is found")
    p.add_argument("--judge", action="store_true", help="the local model judges the links the vectors leave open")
    sys.exit(asyncio.run(main(p.parse_args())))
