"""The natural question sets: questions written by hand the way people ask them (lay words for the schema's names,
possessives, yes/no, comparisons, negation, ...), one JSON-lines file per graph in bench/kgqa/natural/. Each
question's gold was computed by a reference query and checked a second way by another query; this checks
both against the graph again and says where either disagrees with the gold.

    .venv/bin/python bench/natural_questions.py                       # every file, each graph in its own FalkorDB
    .venv/bin/python bench/natural_questions.py --graph airports      # one graph's file
    .venv/bin/python bench/natural_questions.py --url redis://127.0.0.1:6391 --graph airports   # a graph served already
    .venv/bin/python bench/natural_questions.py --summary             # counts by category, style and hops
    .venv/bin/python bench/natural_questions.py --dir bench/kgqa/heldout   # the held-out set's files

A line holds: `id`, `graph`, `category` (bench/kgqa/questions.py's CATEGORIES), `styles` (a list of STYLES),
`hops` (the relationships the answer's walk crosses, 0 for none), `text`, `gold` (bench/kgqa/questions.py's
kinds), `reference` and `check` (two Cypher queries written differently; a list of them, one per part, for an
`all` gold). What a query must return, by gold kind:
- number: one row whose first column is the figure;
- boolean: one row whose first column is true or false;
- names: the rows' first column is the set of names (the first spelling of each gold item);
- topk: the rows' first column, in order, begins with the k gold names (as a set: ties may come in any order);
- date: one row whose first column is the ISO date;
- absent: one row whose first column is 0 (nothing by that name).
The files are read by bench/kgqa.py --questions like any generated set.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.kgqa.questions import CATEGORIES
from bench.kgqa.scoring import echoes

NATURAL_DIR = Path(__file__).resolve().parent / "kgqa" / "natural"
STYLES = (
    "lay-words",  # a synonym or everyday word for a label, relationship or property
    "possessive",
    "passive",
    "imperative",
    "terse",
    "yes-no",
    "which-of-two",
    "top-n",
    "ties",
    "threshold",
    "count-condition",
    "negation",
    "set",
    "connection",
    "lower-case-name",
    "name-first",
    "per-group",
    "stored-value",
    "id-lookup",
    "relationship-property",
    "not-found",
    "schema-words",  # spelled as the schema spells it, for contrast
)
FIELDS = ("id", "graph", "category", "styles", "hops", "text", "gold", "reference", "check")


def read_file(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def form_problems(q: dict[str, Any]) -> list[str]:
    """What is wrong with a line's form, before any query runs."""
    problems = [f"missing {f}" for f in FIELDS if f not in q]
    if problems:
        return problems
    if q["category"] not in CATEGORIES:
        problems.append(f"category {q['category']!r} is not one of {', '.join(CATEGORIES)}")
    problems += [f"style {s!r} is not one of STYLES" for s in q["styles"] if s not in STYLES]
    if not isinstance(q["hops"], int) or not 0 <= q["hops"] <= 6:
        problems.append("hops must be a whole number from 0 to 6")
    parts = q["gold"]["parts"] if q["gold"].get("kind") == "all" else [q["gold"]]
    for key in ("reference", "check"):
        queries = q[key] if isinstance(q[key], list) else [q[key]]
        if len(queries) != len(parts):
            problems.append(f"{key}: {len(queries)} queries for {len(parts)} gold parts")
    # A which-of-two question names both options: its gold is a ranking (the right one named before the other).
    two_named = "which-of-two" in q["styles"] and q["gold"].get("kind") == "topk"
    if echoes(q["text"], q["gold"]) and not two_named:
        problems.append("the question states its own answer (a which-of-two names both: give it a topk gold)")
    for part in parts:
        expected = {n.lower() for item in part.get("items", []) for n in ([item] if isinstance(item, str) else item)}
        if expected & {d.lower() for d in part.get("distractors", [])}:
            problems.append("a distractor is also an expected name")
    return problems


def _first_spelling(item: str | list[str]) -> str:
    return item if isinstance(item, str) else item[0]


def disagreement(gold: dict[str, Any], rows: list[list[Any]]) -> str | None:
    """Why a query's rows do not give `gold` (None when they do)."""
    kind = gold["kind"]
    firsts = [row[0] for row in rows if row]
    if kind in ("number", "boolean", "date", "absent"):
        if len(firsts) != 1:
            return f"{len(rows)} rows where one was expected"
        value = firsts[0]
        if kind == "number":
            if not isinstance(value, int | float) or isinstance(value, bool):
                return f"{value!r} is no figure"
            expected = float(gold["value"])
            tol = 1e-9 if gold.get("integer") else float(gold.get("rel_tol", 0.005)) * max(abs(expected), 1e-9)
            return None if math.isclose(value, expected, abs_tol=tol) else f"{value} where the gold is {expected}"
        if kind == "boolean":
            return None if value is bool(gold["value"]) else f"{value!r} where the gold is {gold['value']}"
        if kind == "date":
            return None if str(value)[:10] == gold["value"] else f"{value!r} where the gold is {gold['value']}"
        return None if value == 0 else f"{value!r} where 0 (nothing by that name) was expected"
    expected = {_first_spelling(i) for i in gold["items"]}
    got = [str(v) for v in firsts]
    if kind == "topk":
        head = set(got[: len(expected)])
        return None if head == expected else f"the first {len(expected)} are {sorted(head)}, gold {sorted(expected)}"
    if kind == "names":
        if gold.get("match") == "any":
            return None if expected <= set(got) else f"{sorted(expected - set(got))} not among the rows"
        return None if set(got) == expected else f"rows {sorted(set(got))[:12]}, gold {sorted(expected)[:12]}"
    return f"unknown gold kind {kind!r}"


async def check_question(graph: Any, q: dict[str, Any]) -> list[str]:
    """Every disagreement between the gold and the question's two queries, run on `graph`."""
    problems = form_problems(q)
    if problems:
        return problems
    parts = q["gold"]["parts"] if q["gold"]["kind"] == "all" else [q["gold"]]
    for key in ("reference", "check"):
        queries = q[key] if isinstance(q[key], list) else [q[key]]
        for part, query in zip(parts, queries, strict=True):
            try:
                result = await graph.ro_query(query)
            except Exception as exc:  # the query's own error is the finding
                problems.append(f"{key} failed: {exc}")
                continue
            why = disagreement(part, result.result_set)
            if why:
                problems.append(f"{key}: {why}")
    return problems


@asynccontextmanager
async def served(name: str) -> AsyncIterator[str]:
    """A FalkorDB of its own holding graph `name`."""
    from bench.natural_graph import load_named
    from embedded.parts import falkordb_server
    from embedded.processes import free_port

    port = free_port()
    part = falkordb_server(Path(tempfile.mkdtemp(prefix="tgca-natural-check-")), port)
    part.start()
    try:
        await part.wait_ready(60)
        url = f"redis://127.0.0.1:{port}"
        await load_named(name, url)
        yield url
    finally:
        part.stop()


async def check_file(path: Path, url: str | None) -> tuple[int, int]:
    """(questions, questions with a problem) for one file; each problem is printed."""
    from falkordb.asyncio import FalkorDB

    questions = read_file(path)
    names = {q.get("graph") for q in questions}
    if len(names) != 1:
        print(f"{path}: questions about {len(names)} graphs; one file holds one graph's")
        return len(questions), len(questions)
    name = str(names.pop())
    ids = Counter(q.get("id") for q in questions)
    bad = 0
    for repeated in (i for i, n in ids.items() if n > 1):
        print(f"{path.name}: id {repeated} is used {ids[repeated]} times")
        bad += 1
    async with contextlib.nullcontext(url) if url else served(name) as where:
        db = FalkorDB.from_url(where)
        graph = db.select_graph(name)
        for q in questions:
            problems = await check_question(graph, q)
            if problems:
                bad += 1
                print(f"{path.name} {q.get('id')}: {q.get('text')}\n    " + "\n    ".join(problems))
        await db.aclose()
    return len(questions), bad


def summary(paths: list[Path]) -> None:
    rows = [q for path in paths for q in read_file(path)]
    print(f"{len(rows)} questions over {len({q['graph'] for q in rows})} graphs")
    for title, counter in (
        ("graph", Counter(q["graph"] for q in rows)),
        ("category", Counter(q["category"] for q in rows)),
        ("style", Counter(s for q in rows for s in q["styles"])),
        ("hops", Counter(q["hops"] for q in rows)),
        ("gold kind", Counter(q["gold"]["kind"] for q in rows)),
    ):
        print(f"{title}: " + ", ".join(f"{k} {n}" for k, n in sorted(counter.items(), key=lambda kv: -kv[1])))


async def main_async(args: argparse.Namespace, paths: list[Path]) -> int:
    if args.summary:
        summary(paths)
        return 0
    total = bad = 0
    for path in paths:
        n, b = await check_file(path, args.url)
        total, bad = total + n, bad + b
        print(f"{path.name}: {n} questions, {b} with a problem", flush=True)
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", type=Path, default=NATURAL_DIR, help="the folder of question files (one per graph)")
    p.add_argument("--graph", default=None, help="check only this graph's file")
    p.add_argument("--url", default=None, help="with --graph: the FalkorDB that serves it already")
    p.add_argument("--summary", action="store_true", help="count the questions by category, style and hops")
    args = p.parse_args()
    if args.url and not args.graph:
        p.error("--url needs --graph")
    folder: Path = args.dir
    paths = [folder / f"{args.graph}.jsonl"] if args.graph else sorted(folder.glob("*.jsonl"))
    return asyncio.run(main_async(args, paths))


if __name__ == "__main__":
    sys.exit(main())
