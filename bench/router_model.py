"""(f, continued) The real local model as router and action planner: each request's intent (QUERY /
ACTION / ANSWER) against the expected one, and for actions the planned intent, with latencies.

    .venv/bin/python bench/router_model.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actions.ontology import Ontology
from activities.action_planning import ActionPlanningActivities
from backends.llm import LLMClient
from contracts.routing import RouteInput
from embedded.demo_graph import ONTOLOGY_PATH
from embedded.model_weights import resolve_model
from embedded.parts import llm_server
from embedded.processes import free_port
from service.prompts import PromptTemplates

REQUESTS = [
    ("Pay all orders of supplier Northwind Traders", "ACTION"),
    ("Which three suppliers have the most purchase orders, and how many does each have?", "QUERY"),
    ("Which orders of Northwind Traders are still unpaid?", "QUERY"),
    ("Approve orders PO-20240005 and PO-20240009", "ACTION"),
    ("Cancel all orders of supplier Acme Industrial", "ACTION"),
    ("What is the capital of France?", "ANSWER"),
    ("How many invoices are open?", "QUERY"),
    ("Submit every draft order of supplier Globex Supply", "ACTION"),
]


async def main() -> None:
    port = free_port()
    server = llm_server(Path(tempfile.mkdtemp()), resolve_model().path, port, "local")
    server.start()
    rows = []
    try:
        await server.wait_ready(300)
        llm = LLMClient(f"http://127.0.0.1:{port}/v1", "local", timeout_s=300)
        acts = ActionPlanningActivities(llm, Ontology.load(ONTOLOGY_PATH), PromptTemplates.load())
        for question, expected in REQUESTS:
            started = time.perf_counter()
            routed = await acts.route(RouteInput(question=question))
            route_s = time.perf_counter() - started
            planned, plan_s = "", 0.0
            if routed.intent.value == "ACTION":
                started = time.perf_counter()
                out = await acts.plan_action(RouteInput(question=question))
                plan_s = time.perf_counter() - started
                i = out.intent
                targets = i.entity_ids or f"{i.related_class} {i.related_name!r}" if i else ""
                planned = f"{i.entity_type}.{i.action_name} on {targets}" if i else f"error: {out.error}"
            rows.append((question, expected, routed.intent.value, route_s, planned, plan_s))
            print(rows[-1], flush=True)
        await llm.aclose()
    finally:
        server.stop()
    print(f"\ndate {time.strftime('%Y-%m-%d')}")
    print("| request | expected | routed | route s | action planned | plan s |")
    print("|---|---|---|---|---|---|")
    for q, e, r, rs, p, ps in rows:
        print(f"| {q} | {e} | {r} | {rs:.1f} | {p} | {ps:.1f} |" if p else f"| {q} | {e} | {r} | {rs:.1f} | | |")


if __name__ == "__main__":
    asyncio.run(main())
