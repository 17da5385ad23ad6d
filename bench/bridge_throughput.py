"""Bridge overhead and sustained throughput: Pulsar -> bridge -> Temporal -> worker -> Pulsar.

Real parts (Temporal dev server with SQLite, pulsar-lite, FalkorDB), the worker and the bridge as their own
processes, a scripted instant LLM (a one-step GraphQuery plan) and no MCP servers, so what is measured is
the service's own cost. A TrustGraph-style caller publishes requests with at most C in flight and reads
every response off the shared response topic.

    .venv/bin/python bench/bridge_throughput.py --requests 300 --concurrency 10 50

Reports, per concurrency: requests/s, end-to-end latency p50/p95/p99, first-message latency p50, lost
requests; and the bridge's own time per request from its histogram (decode + start + ack) and the time to
publish each response message (the worker's histogram).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import deployment, run_load

from embedded.processes import tree_cpu_seconds
from tests.scripted_llm import is_planning, is_synthesis

PLAN = json.dumps(
    {
        "steps": [
            {
                "id": "s1",
                "function": "GraphQuery",
                "dependencies": [],
                "arguments": {"query": "MATCH (s:Supplier) RETURN count(s) AS suppliers"},
            }
        ]
    }
)


def instant_llm(body: dict[str, Any]) -> tuple[int, str]:
    if is_planning(body):
        return 200, PLAN
    if is_synthesis(body):
        return 200, "There are 26 suppliers."
    return 200, "ok"


def cpu_by_part(children: list[Any]) -> dict[str, float]:
    parts = {c.name.split(" ")[0]: tree_cpu_seconds(c.pid) for c in children if c.pid}
    parts["bench (caller, scripted LLM)"] = tree_cpu_seconds(os.getpid()) - sum(parts.values())
    return parts


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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()

    async with deployment(instant_llm) as d:
        await run_load(d.pulsar_url, args.warmup, 5, args.timeout)
        rows = []
        for c in args.concurrency:
            # CPU per request by part: which one the load saturates (2 cores: 100 % each at most)
            before = cpu_by_part(d.children)
            rows.append(await run_load(d.pulsar_url, args.requests, c, args.timeout))
            after = cpu_by_part(d.children)
            rows[-1]["cpu"] = {k: after[k] - before.get(k, 0.0) for k in after}
        async with httpx.AsyncClient() as http:
            metrics = (await http.get(f"http://127.0.0.1:{d.bridge_metrics_port}/metrics")).text
            worker_metrics = (await http.get(f"http://127.0.0.1:{d.worker_metrics_port}/metrics")).text

    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"date {time.strftime('%Y-%m-%d')}"
    )
    print(
        "\n| concurrency | requests | completed | lost | requests/s | p50 ms | p95 ms | p99 ms | first message p50 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['concurrency']} | {r['requests']} | {r['completed']} | {r['lost']} | {r['rps']:.1f} | "
            f"{r['p50']:.0f} | {r['p95']:.0f} | {r['p99']:.0f} | {r['first_p50']:.0f} |"
        )
    print("\n| concurrency | part | CPU ms per request | share of one core |")
    print("|---|---|---|---|")
    for r in rows:
        wall_s = r["completed"] / r["rps"] if r["rps"] else 0.0
        for part, cpu_s in sorted(r["cpu"].items(), key=lambda kv: -kv[1]):
            share = f"{cpu_s / wall_s:.0%}" if wall_s else "-"
            print(f"| {r['concurrency']} | {part} | {cpu_s * 1000 / max(r['completed'], 1):.1f} | {share} |")
    request_p50 = histogram_quantile(metrics, "tgca_bridge_request_seconds", 0.5)
    print(f"\nbridge time per request (decode + start workflow + ack), p50: {request_p50 * 1000:.2f} ms")
    # Runs publish their messages from the worker; the bridge publishes only errors for requests it could not start.
    for who, text, name in (
        ("worker", worker_metrics, "tgca_worker_publish_seconds"),
        ("bridge", metrics, "tgca_bridge_emit_seconds"),
    ):
        p50 = histogram_quantile(text, name, 0.5)
        count = [line.rsplit(" ", 1)[1] for line in text.splitlines() if line.startswith(f"{name}_count")]
        if p50 is not None:
            print(f"{who} time per response message (publish), p50: {p50 * 1000:.2f} ms over {count[0]} messages")


if __name__ == "__main__":
    asyncio.run(main())
