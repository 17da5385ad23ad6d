"""Bridge overhead and sustained throughput: Pulsar -> bridge -> Temporal -> worker -> bridge -> Pulsar.

Real parts (Temporal dev server with SQLite, pulsar-lite, FalkorDB), the worker and the bridge as their own
processes, a scripted instant LLM (a one-step GraphQuery plan) and no MCP servers, so what is measured is
the service's own cost. A TrustGraph-style caller publishes requests with at most C in flight and reads
every response off the shared response topic.

    .venv/bin/python bench/bridge_throughput.py --requests 300 --concurrency 10 50

Reports, per concurrency: requests/s, end-to-end latency p50/p95/p99, first-message latency p50, lost
requests; and the bridge's own time per message from its histograms (decode + start + ack per request,
publish per response).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pulsar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from embedded import demo_graph
from embedded.parts import falkordb_server, pulsar_broker, temporal_server
from embedded.processes import ManagedProcess, free_port
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis
from worker.runtime import pulsar_client
from workflows.confidence_agent import SEARCH_ATTRIBUTES

PLAN = json.dumps({"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [],
                              "arguments": {"query": "MATCH (s:Supplier) RETURN count(s) AS suppliers"}}]})


def instant_llm(body: dict[str, Any]) -> tuple[int, str]:
    if is_planning(body):
        return 200, PLAN
    if is_synthesis(body):
        return 200, "There are 25 suppliers."
    return 200, "ok"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def histogram_quantile(text: str, name: str, q: float) -> float | None:
    """Linear interpolation inside the Prometheus bucket that holds quantile q."""
    buckets: list[tuple[float, float]] = []
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket"):
            le = line.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
    if not buckets or buckets[-1][1] == 0:
        return None
    target = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= target:
            if bound == float("inf"):
                return lower_bound
            share = (target - lower_count) / (count - lower_count) if count > lower_count else 0
            return lower_bound + share * (bound - lower_bound)
        lower_bound, lower_count = bound, count
    return None


async def run_load(pulsar_url: str, request_topic: str, response_topic: str, total: int, concurrency: int,
                   timeout_s: float) -> dict[str, Any]:
    client = pulsar_client(pulsar_url)
    consumer = await client.subscribe(response_topic, f"rr-{uuid.uuid4().hex}",
                                      initial_position=pulsar.InitialPosition.Latest)
    producer = await client.create_producer(request_topic, batching_enabled=False)
    sent: dict[str, float] = {}
    first: dict[str, float] = {}
    done: dict[str, float] = {}
    finished: dict[str, asyncio.Event] = {}

    async def receive() -> None:
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            rid = (message.properties() or {}).get("id", "")
            if rid not in sent:
                continue
            now = time.perf_counter()
            first.setdefault(rid, now)
            if json.loads(message.data()).get("end_of_dialog"):
                done.setdefault(rid, now)
                finished[rid].set()

    slots = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with slots:
            rid = str(uuid.uuid4())
            finished[rid] = asyncio.Event()
            sent[rid] = time.perf_counter()
            await producer.send(b'{"question": "How many suppliers are there?"}', properties={"id": rid})
            try:
                await asyncio.wait_for(finished[rid].wait(), timeout_s)
            except TimeoutError:
                pass

    receiver = asyncio.create_task(receive())
    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    wall = time.perf_counter() - started
    receiver.cancel()
    await client.close()
    latencies = [(done[r] - sent[r]) * 1000 for r in done]
    firsts = [(first[r] - sent[r]) * 1000 for r in first]
    return {"concurrency": concurrency, "requests": total, "completed": len(done), "lost": total - len(done),
            "rps": len(done) / wall, "p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95),
            "p99": percentile(latencies, 0.99), "first_p50": percentile(firsts, 0.5)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="tgca-bench-"))
    ports = {name: free_port() for name in ("temporal", "ui", "pulsar", "falkordb", "bridge_metrics")}
    servers = [temporal_server(data, ports["temporal"], ports["ui"], SEARCH_ATTRIBUTES),
               pulsar_broker(data, ports["pulsar"]), falkordb_server(data, ports["falkordb"])]
    children: list[ManagedProcess] = []
    try:
        for part in servers:
            part.start()
            children.append(part)
        await asyncio.gather(*(p.wait_ready(90) for p in servers))
        falkordb_url = f"redis://127.0.0.1:{ports['falkordb']}"
        await demo_graph.load(falkordb_url, "procurement")
        with ScriptedLLM(instant_llm) as llm:
            env = {"TGCA_TEMPORAL_ADDRESS": f"127.0.0.1:{ports['temporal']}",
                   "TGCA_PULSAR_URL": f"pulsar://127.0.0.1:{ports['pulsar']}", "TGCA_FALKORDB_URL": falkordb_url,
                   "TGCA_LLM_BASE_URL": llm.base_url, "TGCA_LLM_MODEL": "scripted", "TGCA_MCP_SERVERS": "[]",
                   "TGCA_METRICS_PORT": "0", "TGCA_BRIDGE_METRICS_PORT": str(ports["bridge_metrics"]),
                   "TGCA_AUDIT_PATH": str(data / "audit.jsonl"), "TGCA_LOG_LEVEL": "WARNING"}
            for name, module in (("worker", "worker"), ("bridge", "bridge")):
                part = ManagedProcess(name, [sys.executable, "-m", module], data / f"{name}.log", env=env)
                part.start()
                children.append(part)
            await asyncio.sleep(4)
            request_topic = "non-persistent://tg/request/agent:default:default"
            response_topic = "non-persistent://tg/response/agent:default:default"
            await run_load(env["TGCA_PULSAR_URL"], request_topic, response_topic, args.warmup, 5, args.timeout)
            rows = []
            async with httpx.AsyncClient() as http:
                for concurrency in args.concurrency:
                    rows.append(await run_load(env["TGCA_PULSAR_URL"], request_topic, response_topic, args.requests,
                                               concurrency, args.timeout))
                metrics = (await http.get(f"http://127.0.0.1:{ports['bridge_metrics']}/metrics")).text
    finally:
        for part in reversed(children):
            part.stop()

    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"date {time.strftime('%Y-%m-%d')}")
    print("\n| concurrency | requests | completed | lost | requests/s | p50 ms | p95 ms | p99 ms "
          "| first message p50 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['concurrency']} | {r['requests']} | {r['completed']} | {r['lost']} | {r['rps']:.1f} | "
              f"{r['p50']:.0f} | {r['p95']:.0f} | {r['p99']:.0f} | {r['first_p50']:.0f} |")
    request_p50 = histogram_quantile(metrics, "tgca_bridge_request_seconds", 0.5)
    emit_p50 = histogram_quantile(metrics, "tgca_bridge_emit_seconds", 0.5)
    emits = [line for line in metrics.splitlines() if line.startswith("tgca_bridge_emit_seconds_count")]
    print(f"\nbridge time per request (decode + start workflow + ack), p50: {request_p50 * 1000:.2f} ms")
    print(f"bridge time per response message (publish), p50: {emit_p50 * 1000:.2f} ms "
          f"over {emits[0].rsplit(' ', 1)[1] if emits else '?'} messages")


if __name__ == "__main__":
    asyncio.run(main())
