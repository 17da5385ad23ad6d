"""The real local model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama-cpp-python's server) as the
planner: planning latency and the share of valid plans over a fixed question set on the demo graph.

    .venv/bin/python bench/real_model.py

A plan counts as valid when it passes validation (possibly after the one repair round), and as
executable when every GraphQuery in it runs read-only without error; "rows" counts plans whose graph
queries all return at least one row.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from activities.planning import PlanningActivities
from backends.factory import make_backends
from backends.graph_store import GraphQueryError
from contracts.query_path import PlanningInput
from contracts.run import AgentSettings
from embedded import demo_graph
from embedded.model_weights import resolve_model
from embedded.parts import falkordb_server, llm_server
from embedded.processes import free_port
from service.config import ServiceConfig

QUESTIONS = [
    "Which three suppliers have the most purchase orders?",
    "How many invoices are still open?",
    "Which warehouse receives the most purchase orders?",
    "What is the total amount of all purchase orders issued to Globex Supply?",
    "Which products does Acme Industrial supply?",
    "How many purchase orders were cancelled?",
    "Which suppliers are based in Germany?",
    "What is the average unit price of products in the Electronics category?",
    "How many payments were made by credit card?",
    "Which supplier has the highest rating?",
]


async def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="tgca-model-"))
    model = resolve_model()
    fk_port, llm_port = free_port(), free_port()
    parts = [falkordb_server(data, fk_port), llm_server(data, model.path, llm_port, "qwen")]
    for part in parts:
        part.start()
    try:
        await asyncio.gather(parts[0].wait_ready(30), parts[1].wait_ready(180))
        url = f"redis://127.0.0.1:{fk_port}"
        await demo_graph.load(url, "procurement")
        config = ServiceConfig(
            falkordb_url=url,
            llm_base_url=f"http://127.0.0.1:{llm_port}/v1",
            llm_model="qwen",
            llm_timeout_s=300,
            mcp_servers=[],
        )
        backends = make_backends(config)
        graph = backends.graph
        assert graph is not None
        planner = PlanningActivities(backends)
        rows = []
        for question in QUESTIONS:
            started = time.perf_counter()
            out = await planner.plan(PlanningInput(question=question, plan_id="p", settings=AgentSettings()))
            seconds = time.perf_counter() - started
            executable = with_rows = out.plan is not None
            for step in out.plan.steps if out.plan else []:
                if step.function != "GraphQuery":
                    continue
                try:
                    result = await graph.ro_query(step.arguments["query"])
                    with_rows = with_rows and result.total_rows > 0
                except GraphQueryError:
                    executable = with_rows = False
            rows.append((question, seconds, out.plan is not None, out.attempts, executable, with_rows))
        await backends.aclose()
    finally:
        for part in parts:
            part.stop()

    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"date {time.strftime('%Y-%m-%d')}; model {model.path.name}"
    )
    print("\n| question | planning s | valid | attempts | queries run | queries return rows |")
    print("|---|---|---|---|---|---|")
    for question, seconds, valid, attempts, executable, with_rows in rows:
        print(
            f"| {question} | {seconds:.1f} | {'yes' if valid else 'no'} | {attempts} | "
            f"{'yes' if executable else 'no'} | {'yes' if with_rows else 'no'} |"
        )
    times = [r[1] for r in rows]
    n = len(rows)
    print(
        f"\nplanning latency: median {statistics.median(times):.1f} s (first, cold: {times[0]:.1f} s); "
        f"valid plans {sum(r[2] for r in rows)}/{n}; executable {sum(r[4] for r in rows)}/{n}; "
        f"returning rows {sum(r[5] for r in rows)}/{n}"
    )


if __name__ == "__main__":
    asyncio.run(main())
