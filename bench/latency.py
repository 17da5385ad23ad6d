"""Latency of one question with three independent tool steps, end to end through Pulsar and Temporal,
side by side with the same work done by a plain in-process asyncio executor (no Temporal, no Pulsar).

    .venv/bin/python bench/latency.py --runs 20

(a) orchestration overhead: a scripted instant LLM; the service vs the in-process executor.
(c) simulated latency: 300 ms per LLM call (planning, synthesis), 50 ms per tool call; parallel
    execution on vs off (request-level setting), and the ratio to TrustGraph's ReAct agent (1.67 s p50
    measured for the same shape of question).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import deployment, percentile, run_load

from backends.llm import LLMClient
from contracts.run import AgentSettings
from planning.plan_parser import parse_plan
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis
from tools.registry import static_catalogue

REACT_P50_MS = 1670.0
PLAN = json.dumps(
    {
        "steps": [
            {"id": name, "function": "TextCompletion", "dependencies": [], "arguments": {"prompt": f"Look up {name}"}}
            for name in ("orders", "invoices", "payments")
        ]
    }
)

BUILTIN_TOOLS = static_catalogue(["GraphQuery", "TextCompletion", "KnowledgeQuery"])


def llm_with_delays(llm_s: float, tool_s: float) -> Any:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            time.sleep(llm_s)
            return 200, PLAN
        if is_synthesis(body):
            time.sleep(llm_s)
            return 200, "Orders, invoices and payments are all in order."
        time.sleep(tool_s)
        return 200, "All in order."

    return respond


async def in_process(llm_url: str, parallel: bool) -> float:
    """The same three-step plan with the same LLM calls, run directly: plan, steps, synthesis."""
    llm = LLMClient(llm_url, "scripted")
    started = time.perf_counter()
    completion = await llm.chat([{"role": "user", "content": "plan"}], json_schema={"type": "object"})
    plan = parse_plan(completion.text, plan_id="p", tools=BUILTIN_TOOLS, settings=AgentSettings())
    calls = [llm.chat([{"role": "user", "content": s.arguments["prompt"]}]) for s in plan.steps]
    if parallel:
        await asyncio.gather(*calls)
    else:
        for call in calls:
            await call
    await llm.chat([{"role": "user", "content": "Step results: ..."}])
    elapsed = (time.perf_counter() - started) * 1000
    await llm.aclose()
    return elapsed


async def measure(llm_s: float, tool_s: float, runs: int) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    async with deployment(llm_with_delays(llm_s, tool_s)) as d:
        for parallel in (True, False):
            payload = json.dumps(
                {
                    "question": "Are orders, invoices and payments in order?",
                    "plan": json.dumps({"parallel_execution": parallel}),
                }
            ).encode()
            await run_load(d.pulsar_url, 3, 1, 60, payload)  # warm-up
            service = await run_load(d.pulsar_url, runs, 1, 120, payload)
            with ScriptedLLM(llm_with_delays(llm_s, tool_s)) as llm:
                local = [await in_process(llm.base_url, parallel) for _ in range(runs)]
            label = "parallel" if parallel else "sequential"
            rows[label] = {
                "service_p50": service["p50"],
                "service_p95": service["p95"],
                "service_p99": service["p99"],
                "local_p50": percentile(local, 0.5),
                "lost": service["lost"],
            }
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    instant = await measure(0.0, 0.0, args.runs)
    simulated = await measure(0.3, 0.05, args.runs)
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"date {time.strftime('%Y-%m-%d')}; {args.runs} sequential runs per row"
    )
    print("\n(a) orchestration overhead, instant LLM and tools, three independent steps")
    print("| steps | service p50 ms | p95 ms | p99 ms | in-process p50 ms | overhead p50 ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    for label, r in instant.items():
        print(
            f"| {label} | {r['service_p50']:.0f} | {r['service_p95']:.0f} | {r['service_p99']:.0f} | "
            f"{r['local_p50']:.0f} | {r['service_p50'] - r['local_p50']:.0f} | "
            f"{r['service_p50'] / max(r['local_p50'], 0.1):.1f}x |"
        )
    print("\n(c) 300 ms per LLM call, 50 ms per tool call, three independent tools")
    print("| steps | service p50 ms | p95 ms | in-process p50 ms | overhead p50 ms | vs ReAct 1670 ms |")
    print("|---|---|---|---|---|---|")
    for label, r in simulated.items():
        print(
            f"| {label} | {r['service_p50']:.0f} | {r['service_p95']:.0f} | {r['local_p50']:.0f} | "
            f"{r['service_p50'] - r['local_p50']:.0f} | {r['service_p50'] / REACT_P50_MS:.2f}x |"
        )


if __name__ == "__main__":
    asyncio.run(main())
