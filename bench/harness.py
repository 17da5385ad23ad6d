"""Shared by the benchmarks: the real parts, the worker and the bridge as processes, a caller over Pulsar."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulsar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contracts.names import SEARCH_ATTRIBUTES
from embedded import demo_graph
from embedded.parts import falkordb_server, pulsar_broker, temporal_server
from embedded.processes import ManagedProcess, free_port
from service.connections import pulsar_client
from tests.scripted_llm import ScriptedLLM

REQUEST_TOPIC = "non-persistent://tg/request/agent:default:default"
RESPONSE_TOPIC = "non-persistent://tg/response/agent:default:default"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Deployment:
    env: dict[str, str]
    data: Path
    children: list[ManagedProcess]
    bridge_metrics_port: int
    worker_metrics_port: int

    @property
    def pulsar_url(self) -> str:
        return self.env["TGCA_PULSAR_URL"]


@asynccontextmanager
async def deployment(responder: Callable[[dict[str, Any]], tuple[int, str]], **extra_env: str):  # type: ignore[no-untyped-def]
    data = Path(tempfile.mkdtemp(prefix="tgca-bench-"))
    ports = {name: free_port() for name in ("temporal", "ui", "pulsar", "falkordb", "bridge_metrics", "metrics")}
    # BENCH_TEMPORAL_DYNAMIC_CONFIG='{"key": value}': a server setting to measure against the default.
    dynamic = json.loads(os.environ.get("BENCH_TEMPORAL_DYNAMIC_CONFIG") or "{}")
    servers = [
        temporal_server(data, ports["temporal"], ports["ui"], SEARCH_ATTRIBUTES, dynamic),
        pulsar_broker(data, ports["pulsar"]),
        falkordb_server(data, ports["falkordb"]),
    ]
    children: list[ManagedProcess] = []
    try:
        for part in servers:
            part.start()
            children.append(part)
        await asyncio.gather(*(p.wait_ready(90) for p in servers))
        falkordb_url = f"redis://127.0.0.1:{ports['falkordb']}"
        await demo_graph.load(falkordb_url, "procurement")
        with ScriptedLLM(responder) as llm:
            env = {
                "TGCA_TEMPORAL_ADDRESS": f"127.0.0.1:{ports['temporal']}",
                "TGCA_PULSAR_URL": f"pulsar://127.0.0.1:{ports['pulsar']}",
                "TGCA_FALKORDB_URL": falkordb_url,
                "TGCA_LLM_BASE_URL": llm.base_url,
                "TGCA_LLM_MODEL": "scripted",
                "TGCA_MCP_SERVERS": "[]",
                "TGCA_AUDIT_PATH": str(data / "audit.jsonl"),
                "TGCA_LOG_LEVEL": "WARNING",
                **extra_env,
            }
            metrics = {"worker": ports["metrics"], "bridge": ports["bridge_metrics"]}  # one port per process
            for name in ("worker", "bridge"):
                part = ManagedProcess(
                    name,
                    [sys.executable, "-m", name],
                    data / f"{name}.log",
                    env={**env, "TGCA_METRICS_PORT": str(metrics[name])},
                )
                part.start()
                children.append(part)
            await asyncio.sleep(4)
            yield Deployment(env, data, children, ports["bridge_metrics"], ports["metrics"])
    finally:
        for part in reversed(children):
            part.stop()


async def run_load(
    pulsar_url: str,
    total: int,
    concurrency: int,
    timeout_s: float,
    payload: bytes = b'{"question": "How many suppliers are there?"}',
) -> dict[str, Any]:
    """A TrustGraph-style caller: C requests in flight, every response read off the shared topic."""
    client = pulsar_client(pulsar_url)
    consumer = await client.subscribe(
        RESPONSE_TOPIC, f"rr-{uuid.uuid4().hex}", initial_position=pulsar.InitialPosition.Latest
    )
    producer = await client.create_producer(REQUEST_TOPIC, batching_enabled=False)
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
            await producer.send(payload, properties={"id": rid})
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
    return {
        "concurrency": concurrency,
        "requests": total,
        "completed": len(done),
        "lost": total - len(done),
        "rps": len(done) / wall,
        "latencies": latencies,
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99),
        "first_p50": percentile(firsts, 0.5),
    }
