"""Worker and bridge memory under 100 concurrent requests (peak resident set, VmHWM, from /proc).

    .venv/bin/python bench/memory.py --requests 300 --concurrency 100

The specification budgets 768 MB for the agent; the target here is under 250 MB per process. The worker's
query checker (its child process running cypher-guardrail, backends/query_checker.py) is reported on a row
of its own, and the agent's total (worker, its checker and the bridge, peaks added) beside the budget.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bridge_throughput import instant_llm
from harness import deployment, run_load

from embedded.processes import tree_pids

BUDGET_MB = 768  # the specification's budget for the whole agent


def memory_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def query_checker(worker_pid: int) -> int | None:
    """The worker's child running the query checks (the worker starts it in the background at startup)."""
    for pid in tree_pids(worker_pid)[1:]:
        try:
            if b"backends.query_checker_process" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
        except OSError:
            continue
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    async with deployment(instant_llm) as d:
        processes = {p.name: p.pid for p in d.children if p.name in ("worker", "bridge")}
        idle = {name: memory_mb(pid, "VmRSS") for name, pid in processes.items()}
        checker = query_checker(processes["worker"])  # started with the worker, in the background
        if checker is not None:
            processes["worker's query checker"] = checker
            idle["worker's query checker"] = memory_mb(checker, "VmRSS")
        result = await run_load(d.pulsar_url, args.requests, args.concurrency, 300)
        peak = {name: memory_mb(pid, "VmHWM") for name, pid in processes.items()}
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"date {time.strftime('%Y-%m-%d')}; {args.requests} requests, {args.concurrency} in flight, "
        f"{result['completed']} completed, {result['lost']} lost"
    )
    print("\n| process | RSS idle MB | peak RSS under load MB | target MB |")
    print("|---|---|---|---|")
    for name in processes:
        print(f"| {name} | {idle[name]:.0f} | {peak[name]:.0f} | 250 |")
    print(f"| all of them (peaks added) | {sum(idle.values()):.0f} | {sum(peak.values()):.0f} | {BUDGET_MB} |")


if __name__ == "__main__":
    asyncio.run(main())
