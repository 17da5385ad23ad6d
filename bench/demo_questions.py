"""The demo graph's questions a new user tried and reported on, asked end to end on the embedded stack and the
real local model, each judged against a gold answer computed from the graph by a reference query: right, or
wrong and stated how sure. The follow-up is asked in the same conversation. The action request is planned but
never applied: its approval card is read for the number of targets, and nobody approves it (the run's
plan gives a person 10 s, then it ends with nothing changed).

    .venv/bin/python bench/demo_questions.py --out bench/results/demo-questions.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import sys
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actions.ontology import Ontology
from backends.graph_store import GraphStore
from bench.kgqa.questions import Gold, Question
from bench.kgqa.results import Result
from bench.kgqa.runner import Interrupt, ask_one, running_stack
from embedded import demo_graph

ACTION = "Pay all approved purchase orders of Northwind Traders"


async def golds(graph: GraphStore) -> list[tuple[Question, str | None]]:
    """(question, conversation key) pairs; questions sharing a key are asked in one conversation, in order."""

    async def rows(query: str) -> list[list[Any]]:
        return (await graph.ro_query(query)).rows

    ranking = await rows(
        "MATCH (po:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) RETURN s.name, count(po) AS n ORDER BY n DESC, s.name"
    )
    top, top_count = ranking[0]
    [[unpaid]] = await rows(
        "MATCH (i:Invoice {status: 'open'})-[:BILLS]->(:PurchaseOrder)-[:ISSUED_TO]->"
        "(:Supplier {name: 'Globex Supply'}) RETURN sum(i.amount)"
    )
    both = await rows(
        "MATCH (:Supplier {name: 'Acme Industrial'})-[:SUPPLIES]->(p:Product)<-[:SUPPLIES]-"
        "(:Supplier {name: 'Globex Supply'}) RETURN p.name"
    )
    products = await rows("MATCH (p:Product) RETURN p.name")
    actions = sorted(Ontology.load(demo_graph.ONTOLOGY_PATH).actions.get("PurchaseOrder", {}))

    def names(items: list[str], distractors: list[str]) -> Gold:
        return {"kind": "names", "items": items, "match": "all", "distractors": distractors}

    common: Gold = (
        names([r[0] for r in both], [])
        if both
        else {"kind": "absent", "entity": "products supplied by both", "distractors": [r[0] for r in products]}
    )
    return [
        (
            Question(
                "demo-most-orders",
                "superlative",
                "Which supplier has the most purchase orders?",
                {"kind": "topk", "items": [top], "match": "all", "distractors": [r[0] for r in ranking[1:]]},
            ),
            "chat",
        ),
        (
            Question(
                "demo-follow-up",
                "count",
                "How many purchase orders does that supplier have?",
                {"kind": "number", "value": top_count, "integer": True, "rel_tol": 0},
            ),
            "chat",
        ),
        (
            Question(
                "demo-unpaid-total",
                "aggregation",
                "What is the total amount of unpaid invoices of Globex Supply?",
                {"kind": "number", "value": round(float(unpaid), 2), "integer": False, "rel_tol": 0.005},
            ),
            None,
        ),
        (
            Question(
                "demo-both-supply",
                "set",
                "Which products does Acme Industrial supply that are also supplied by Globex Supply?",
                common,
            ),
            None,
        ),
        (
            Question("demo-actions", "lookup", "Which actions are available for a PurchaseOrder?", names(actions, [])),
            None,
        ),
    ]


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    command = shlex.join(["bench/demo_questions.py", *sys.argv[1:]])
    # A throwaway development stack: actions are open, so the request reaches its approval card (which nobody
    # accepts) instead of being refused for want of configured approvers.
    os.environ["TGCA_AGENT__OPEN_ACTIONS"] = "true"
    async with running_stack("procurement", Interrupt(), say=lambda text: print(text, flush=True)) as running:
        stack = running.stack
        graph = GraphStore(stack.falkordb_url, stack.o.graph_name)
        try:
            asked = await golds(graph)
            [[approved]] = (
                await graph.ro_query(
                    "MATCH (po:PurchaseOrder {status: 'approved'})"
                    "-[:ISSUED_TO]->(:Supplier {name: 'Northwind Traders'}) "
                    "RETURN count(po)"
                )
            ).rows
        finally:
            await graph.aclose()
        conversations = {key: f"demo-{key}-{uuid.uuid4().hex[:8]}" for _, key in asked if key}
        for question, key in asked:
            outcome = await ask_one(stack, question.text, args.timeout, conversations.get(key, ""))
            answer, seconds = outcome.answer, outcome.seconds
            result = Result.judge(
                question,
                "procurement",
                answer,
                seconds,
                outcome.asked_human,
                outcome.error,
                command,
                outcome.evidence,
                outcome.evidence_score,
                outcome.queries,
            )
            records.append(asdict(result))
            print(
                f"{question.id}: {'right' if result.correct else 'wrong'} at {result.confidence} "
                f"({seconds:.1f} s): {answer[:300]!r}",
                flush=True,
            )
        action = await ask_one(stack, ACTION, args.timeout)
        card = next((text for text in action.messages if "Approval needed" in text), "")
        counted = [int(n) for n in re.findall(r"\bruns on (\d+) ", card)]
        records.append(
            {
                "id": "demo-pay-northwind",
                "question": ACTION,
                "gold_targets": approved,
                "targets_said": counted[0] if counted else None,
                "approval_card": card[:2000],
                "answer": action.answer,
                "error": action.error,
                "seconds": round(action.seconds, 2),
                "command": command,
            }
        )
        print(f"demo-pay-northwind: gold {approved} targets; the card says {counted[:1]}: {card[:400]!r}", flush=True)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("demo-questions.jsonl"))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one answer")
    args = parser.parse_args()
    records = asyncio.run(run(args))
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"results in {args.out}")


if __name__ == "__main__":
    main()
