"""Worker and bridge memory under 100 concurrent requests (peak resident set, VmHWM, from /proc).

    .venv/bin/python bench/memory.py --requests 300 --concurrency 100

The specification budgets 768 MB for the agent; the target here is under 250 MB per process.
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


def memory_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    async with deployment(instant_llm) as d:
        processes = {p.name: p.pid for p in d.children if p.name in ("worker", "bridge")}
        idle = {name: memory_mb(pid, "VmRSS") for name, pid in processes.items()}
        result = await run_load(d.pulsar_url, args.requests, args.concurrency, 300)
        peak = {name: memory_mb(pid, "VmHWM") for name, pid in processes.items()}
    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"date {time.strftime('%Y-%m-%d')}; {args.requests} requests, {args.concurrency} in flight, "
          f"{result['completed']} completed, {result['lost']} lost")
    print("\n| process | RSS idle MB | peak RSS under load MB | target MB |")
    print("|---|---|---|---|")
    for name in processes:
        print(f"| {name} | {idle[name]:.0f} | {peak[name]:.0f} | 250 |")


if __name__ == "__main__":
    asyncio.run(main())
