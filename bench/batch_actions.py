"""(d) Batch actions: one request acting on 20, 1,000 and 10,000 entities with a simulated 50 ms per
action, against the ideal (entities x latency / concurrency); the entities executed in groups (the default)
and one per activity, side by side in the same run (each round runs every mode once, one after another).
Every execution is a local activity of the run: writes run no other way (activities/actions.py), so the
modes that put them on the tools queue as regular activities ("activities", "activities-groups", measured
2026-11-21 and 11-22 in docs/benchmarks/actions.md) are gone. Each child window's parent check
(`check_batch_parent`, from 2026-11-27) is part of the batch time.

    .venv/bin/python bench/batch_actions.py --sizes 20 1000 10000 --concurrency 50

The whole agent runs: the real Temporal dev server, FalkorDB, the worker families in this process, the
router and action planner through the real LLM client (a scripted instant model); the caller's side of
the bridge is the worker's publisher, in-process, timestamping each message. Batch time is from the action_plan
event to the action_complete event (it includes the dry run); the ideal is entities x latency /
concurrency, at least one latency; the largest workflow history of each run is reported too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from falkordb.asyncio import FalkorDB
from prometheus_client import CollectorRegistry
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from backends.factory import make_backends
from contracts.names import SEARCH_ATTRIBUTES, WORKFLOW_NAME, TaskQueues
from contracts.run import AgentRunInput, AgentSettings
from contracts.wire import AgentRequest, AgentResponse
from embedded.demo_graph import ONTOLOGY_PATH
from embedded.parts import falkordb_server, temporal_server
from embedded.processes import free_port
from service.agent_metrics import AgentMetrics
from service.config import ServiceConfig
from service.lifecycle import configure_logging
from tests.scripted_llm import ScriptedLLM, is_action_planning, is_routing, question_of
from worker.families import FAMILIES, build_workers

LATENCY_S = 0.05
# mode -> entities per (local) activity; 0: the default, a fifth of the concurrency. The names keep "local" so
# that the commands quoted with past figures still run.
MODES = {"local-groups": 0, "local": 1, "local-groups-25": 25, "local-groups-50": 50}
LABELS = {
    "local-groups": "local activities, groups",
    "local": "local activities, one per entity",
    "local-groups-25": "local activities, groups of 25",
    "local-groups-50": "local activities, groups of 50",
}
DEFAULT_MODES = ["local-groups", "local"]


def model(body: dict[str, Any]) -> tuple[int, str]:
    if is_routing(body):
        return 200, json.dumps({"intent": "ACTION"})
    if is_action_planning(body):
        supplier = re.search(r"(Bench Supplier \d+)", question_of(body))
        return 200, json.dumps(
            {
                "entity_type": "PurchaseOrder",
                "action_name": "approve",
                "entity_ids": [],
                "related_class": "Supplier",
                "related_name": supplier.group(1) if supplier else "",
            }
        )
    return 200, "ok"


async def load_orders(url: str, graph: str, sizes: list[int], runs: int) -> None:
    """For each size and run, a supplier with that many submitted orders."""
    db = FalkorDB.from_url(url)
    g = db.select_graph(graph)
    await g.query("CREATE INDEX FOR (n:PurchaseOrder) ON (n.po_number)")
    await g.query("CREATE INDEX FOR (n:Supplier) ON (n.name)")
    for size in sizes:
        for r in range(runs):
            name = f"Bench Supplier {size}{r:02d}"
            await g.query("CREATE (:Supplier {supplier_id: $id, name: $name})", {"id": f"S-{size}-{r}", "name": name})
            for i in range(0, size, 2000):
                await g.query(
                    "MATCH (s:Supplier {name: $name}) UNWIND $ids AS id "
                    "CREATE (:PurchaseOrder {po_number: id, status: 'submitted', total_amount: 1.0})-[:ISSUED_TO]->(s)",
                    {"name": name, "ids": [f"B-{size}-{r}-{j}" for j in range(i, min(size, i + 2000))]},
                )
    await db.aclose()


async def history_events(client: Client, workflow_id: str) -> int:
    return len((await client.get_workflow_handle(workflow_id).fetch_history()).events)


async def one_run(
    client: Client,
    queues: TaskQueues,
    times: dict[str, dict[str, float]],
    size: int,
    supplier: str,
    mode: str,
    concurrency: int,
) -> dict[str, Any]:
    request_id = uuid.uuid4().hex
    settings = AgentSettings(
        action_max_concurrent=concurrency,
        action_approval_above=100_000,
        action_group_size=MODES[mode],
        audit_enabled=False,
    )
    times[request_id] = {}
    started = time.perf_counter()
    await client.execute_workflow(
        WORKFLOW_NAME,
        AgentRunInput(
            request=AgentRequest(question=f"Approve all orders of {supplier}"),
            request_id=request_id,
            response_topic="bench",
            queues=queues,
            settings=settings,
        ),
        id=f"agent-{request_id}",
        task_queue=queues.workflow,
    )
    total = time.perf_counter() - started
    t = times[request_id]
    batch = t["action_complete"] - t["action_plan"]
    # entities x latency / concurrency, and never less than one action's latency (20 entities at
    # concurrency 50 cannot finish before the first action does).
    ideal = max(-(-size // concurrency) * LATENCY_S, 1e-9)
    workflow_id = f"agent-{request_id}"
    events = [await history_events(client, workflow_id)]
    windows = -(-size // settings.action_window) if size > settings.action_window else 0
    for i in range(1, windows + 1):
        events.append(await history_events(client, f"{workflow_id}-batch-{i}"))
    return {
        "batch_s": batch,
        "total_s": total,
        "ratio": batch / ideal,
        "ideal_s": ideal,
        "max_events": max(events),
        "children": windows,
    }


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[20, 1000, 10000])
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3, help="runs per size and mode (the median is reported)")
    p.add_argument("--latency-ms", type=float, default=50.0, help="simulated time each action takes")
    p.add_argument("--modes", nargs="+", default=DEFAULT_MODES, choices=list(MODES))
    args = p.parse_args()
    configure_logging("INFO")  # as the worker logs: debug lines (one per message published) are not formatted
    global LATENCY_S
    LATENCY_S = args.latency_ms / 1000
    data = Path(tempfile.mkdtemp(prefix="tgca-batch-bench-"))
    ports = {n: free_port() for n in ("temporal", "ui", "falkordb")}
    servers = [
        temporal_server(data, ports["temporal"], ports["ui"], SEARCH_ATTRIBUTES),
        falkordb_server(data, ports["falkordb"]),
    ]
    for s in servers:
        s.start()
    try:
        await asyncio.gather(*(s.wait_ready(90) for s in servers))
        falkordb_url = f"redis://127.0.0.1:{ports['falkordb']}"
        await load_orders(falkordb_url, "bench", args.sizes, args.rounds * len(args.modes))
        client = await Client.connect(f"127.0.0.1:{ports['temporal']}", data_converter=pydantic_data_converter)
        times: dict[str, dict[str, float]] = {}

        class Timer:
            """The worker's publisher: when each run's plan and completion messages leave."""

            async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
                kind = re.match(r'\{"type": "(action_plan|action_complete)"', response.content)
                if kind:
                    times.setdefault(request_id, {})[kind.group(1)] = time.perf_counter()

        rows = []
        with ScriptedLLM(model) as llm:
            queues = TaskQueues()
            config = ServiceConfig(
                falkordb_url=falkordb_url,
                graph_name="bench",
                llm_base_url=llm.base_url,
                llm_model="scripted",
                ontology_path=str(ONTOLOGY_PATH),
                action_latency_ms=LATENCY_S * 1000,
                queues=queues,
                metrics_port=0,
                audit_path=str(data / "audit.jsonl"),
            )
            backends = make_backends(config)
            workers = build_workers(
                client, config, set(FAMILIES), backends, AgentMetrics(CollectorRegistry()), publisher=Timer()
            )
            for w in workers:
                await w.__aenter__()
            try:
                for size in args.sizes:
                    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in args.modes}
                    supplier_index = 0
                    for _ in range(args.rounds):  # modes interleaved, so noise hits each alike
                        for mode in args.modes:
                            supplier = f"Bench Supplier {size}{supplier_index:02d}"
                            supplier_index += 1
                            results[mode].append(
                                await one_run(client, queues, times, size, supplier, mode, args.concurrency)
                            )
                    for mode, runs in results.items():
                        runs.sort(key=lambda x: x["batch_s"])
                        rows.append({"size": size, "mode": LABELS[mode], **runs[len(runs) // 2]})
                        print(json.dumps(rows[-1]), flush=True)
            finally:
                for w in workers:
                    await w.__aexit__(None, None, None)
                await backends.aclose()
    finally:
        for s in reversed(servers):
            s.stop()
    print(
        f"\nMachine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}; "
        f"date {time.strftime('%Y-%m-%d')}; {LATENCY_S * 1000:.0f} ms per action, concurrency {args.concurrency}, "
        f"median of {args.rounds}"
    )
    print(
        "| entities | each action as | batch wall time | ideal | ratio | whole request | largest history "
        "(events) | child workflows |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['size']:,} | {r['mode']} | {r['batch_s']:.2f} s | {r['ideal_s']:.2f} s | {r['ratio']:.2f}x | "
            f"{r['total_s']:.2f} s | {r['max_events']:,} | {r['children']} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
