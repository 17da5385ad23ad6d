"""The ways of writing a graph step's query, side by side on one run: for each labelled question
- free: the planner writes its plan as the agent does (its first graph query is taken, with the planner's own
  fixes and repairs);
- form: the intent writer fills in the form that cypher/intent.py compiles;
- code: the first of the programs code enumerates and ranks (cypher/programs.py), no model;
- choice: the model picks one of those programs, or none (tools/program_chooser.py). Also recorded: which of
  the programs shown gives the gold answer (whether a miss was the enumeration's or the choice's).
Every query runs on the real graph; each is judged by whether its rows give the gold answer (a ranked query's
rows in their order, so the first must be the gold's). No synthesis: this measures the query writers alone.
Real local model, the graph loaded into the embedded stack.

    .venv/bin/python bench/query_writers.py --questions /tmp/seed2/social-seed2.jsonl --categories multi-hop set
    .venv/bin/python bench/query_writers.py --questions q.jsonl --limit 30 --out bench/results/query-writers/x.jsonl
    .venv/bin/python bench/query_writers.py --questions q.jsonl --writers form choice --per-category 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends import Backends
from backends.factory import make_backends
from backends.graph_store import GraphQueryError
from backends.grounding import ground
from bench.kgqa.questions import Question
from bench.kgqa.runner import Interrupt, running_stack
from bench.kgqa.scoring import is_correct
from bench.kgqa_questions import read
from contracts.query_path import PlanningInput
from contracts.run import AgentSettings
from cypher.intent import IntentError
from service.config import ServiceConfig
from tools.intent_writer import intent_query
from tools.program_chooser import SHOWN, program_query, ranked_programs

NOTHING = "Nothing was found: no such entity exists in the graph."


def rows_text(rows: list[list[Any]]) -> str:
    """The rows as the text the judge reads, in their order."""
    return "; ".join(", ".join(str(v) for v in row) for row in rows) or NOTHING


async def planner_query(backends: Backends, question: str) -> str:
    from activities.planning import PlanningActivities

    out = await PlanningActivities(backends).plan(
        PlanningInput(question=question, plan_id=uuid.uuid4().hex, settings=AgentSettings())
    )
    if out.plan is None:
        raise ValueError(out.error or "no plan")
    queries = [str(s.arguments["query"]) for s in out.plan.steps if s.function == "GraphQuery"]
    if not queries:
        raise ValueError("the plan has no graph query")
    return queries[0]


async def form_query(backends: Backends, question: str) -> str:
    assert backends.graph is not None
    return await intent_query(question, await ground(question, backends.graph), backends)


async def rows_right(backends: Backends, query: str, q: Question) -> tuple[list[list[Any]], bool]:
    assert backends.graph is not None
    rows = (await backends.graph.ro_query(query, timeout_ms=20_000, max_rows=200)).rows
    return rows, is_correct(rows_text(rows), q.gold)


async def judged(backends: Backends, q: Question, write: Any) -> dict[str, Any]:
    started = time.monotonic()
    try:
        query = await write(backends, q.text)
        rows, right = await rows_right(backends, query, q)
        return {"query": query, "rows": rows[:10], "right": right, "seconds": round(time.monotonic() - started, 2)}
    except (ValueError, IntentError, GraphQueryError) as exc:
        return {"error": str(exc), "right": False, "seconds": round(time.monotonic() - started, 2)}


async def code_query(backends: Backends, question: str) -> str:
    assert backends.graph is not None
    _, _, found = await ranked_programs(question, await ground(question, backends.graph), backends, 1)
    if not found:
        raise IntentError("no program fits the question")
    return found[0].query


async def judged_choice(backends: Backends, q: Question) -> dict[str, Any]:
    """The chosen program judged, and which of the programs shown would be right."""
    assert backends.graph is not None
    started = time.monotonic()
    try:
        choice = await program_query(q.text, await ground(q.text, backends.graph), backends, SHOWN)
        seconds = round(time.monotonic() - started, 2)
        rows, right = await rows_right(backends, choice.query, q) if choice.query else ([], False)
    except (ValueError, IntentError, GraphQueryError) as exc:
        return {"error": str(exc), "right": False, "seconds": round(time.monotonic() - started, 2)}
    right_programs = []
    for i, program in enumerate(choice.candidates):
        try:
            if (await rows_right(backends, program.query, q))[1]:
                right_programs.append(i)
        except GraphQueryError:
            pass
    return {
        "query": choice.query,
        "rows": rows[:10],
        "right": right,
        "seconds": seconds,
        "chosen": choice.chosen,
        "shown": len(choice.candidates),
        "right_walks": right_programs,
        "reading": choice.reading,
    }


async def main(args: argparse.Namespace) -> int:
    dataset, every = read(args.questions)
    chosen = [q for q in every if not args.categories or q.category in args.categories]
    if args.per_category:  # the first N of each category, in the file's order
        by_category: dict[str, list[Question]] = defaultdict(list)
        for q in chosen:
            by_category[q.category].append(q)
        kept = {q.id for group in by_category.values() for q in group[: args.per_category]}
        chosen = [q for q in chosen if q.id in kept]
    questions = chosen[: args.limit]
    out = args.out.open("a") if args.out else None
    writers = {
        "free": lambda q: judged(backends, q, planner_query),
        "form": lambda q: judged(backends, q, form_query),
        "code": lambda q: judged(backends, q, code_query),
        "choice": lambda q: judged_choice(backends, q),
    }
    writers = {name: writers[name] for name in args.writers}
    tally: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(["n", "shown_right", *writers], 0))
    command = " ".join([".venv/bin/python", "bench/query_writers.py", *(shlex.quote(a) for a in sys.argv[1:])])
    async with running_stack(dataset, Interrupt()) as running:
        stack = running.stack
        config = ServiceConfig(
            falkordb_url=stack.falkordb_url,
            graph_name=stack.o.graph_name,
            llm_base_url=stack.llm_base_url,
            llm_model=stack.o.llm_model,
        )
        backends = make_backends(config)
        try:
            for q in questions:
                record = {
                    "id": q.id,
                    "category": q.category,
                    "question": q.text,
                    "dataset": dataset,
                    "command": command,
                }
                t = tally[q.category]
                t["n"] += 1
                for name, judge in writers.items():
                    record[name] = await judge(q)
                    t[name] += record[name]["right"]
                t["shown_right"] += bool(record.get("choice", {}).get("right_walks"))
                print(
                    f"{q.id}: "
                    + ", ".join(
                        f"{name} {'right' if record[name]['right'] else 'wrong'} ({record[name]['seconds']} s)"
                        for name in writers
                    ),
                    flush=True,
                )
                if out:
                    out.write(json.dumps(record, default=str) + "\n")
                    out.flush()
        finally:
            await backends.aclose()
    columns = [*writers, *(["shown_right"] if "choice" in writers else [])]
    print("\n| category | questions | " + " | ".join(f"{c} right" for c in columns) + " |")
    print("|---" * (len(columns) + 2) + "|")
    for category, t in [
        *sorted(tally.items()),
        ("all", {c: sum(t[c] for t in tally.values()) for c in ["n", *columns]}),
    ]:
        print(f"| {category} | {t['n']} | " + " | ".join(str(t[c]) for c in columns) + " |")
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--questions", type=Path, required=True, help="a generated questions file")
    p.add_argument("--categories", nargs="*", default=[], help="only these categories")
    p.add_argument("--per-category", type=int, default=None, help="at most N questions of each category")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument(
        "--writers", nargs="+", choices=["free", "form", "code", "choice"], default=["free", "form", "choice"]
    )
    p.add_argument("--out", type=Path, default=None, help="append each question's record (JSON lines)")
    sys.exit(asyncio.run(main(p.parse_args())))
