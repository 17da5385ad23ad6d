"""/healthz next to /metrics: the real worker and bridge processes against the real parts answer 200 and
still serve their metrics (docker-compose.yml's health checks call exactly this); a part that does not
answer, or a service loop that is gone, is a 503 naming what is wrong."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry, Counter
from temporalio.testing import WorkflowEnvironment

from backends.llm import LLMClient
from contracts.names import TaskQueues
from contracts.redaction import shown_url
from embedded.processes import ManagedProcess, free_port
from service.connections import pulsar_client
from service.health import HealthServer, llm_check, pulsar_check, run_checks, start_health_server, temporal_check
from tests.scripted_llm import ScriptedLLM


def noted(_: dict[str, Any]) -> tuple[int, str]:
    return 200, "noted"


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(noted) as server:
        yield server


def service_env(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, llm_url: str, unique: str, tmp_path: Path
) -> dict[str, str]:
    queues = {
        f"TGCA_QUEUES__{name.upper()}": value for name, value in TaskQueues().suffixed(unique).model_dump().items()
    }
    return {
        "TGCA_TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "TGCA_PULSAR_URL": pulsar_url,
        "TGCA_FALKORDB_URL": falkordb_url,
        "TGCA_LLM_BASE_URL": llm_url,
        "TGCA_LLM_MODEL": "scripted",
        "TGCA_GRAPH_PROGRAMS": "false",  # the scripted plan is the one to run, not code's program
        "TGCA_WORKSPACE": f"health-{unique}",
        "TGCA_LLM_WARM_UP": "false",
        "TGCA_AUDIT_PATH": str(tmp_path / "audit.jsonl"),
        **queues,
    }


async def healthz(port: int) -> tuple[int, dict[str, Any]]:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"http://127.0.0.1:{port}/healthz")
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()


async def test_worker_and_bridge_processes_serve_healthz_next_to_their_metrics(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, llm: ScriptedLLM, unique: str, tmp_path: Path
) -> None:
    env = service_env(temporal_env, pulsar_url, falkordb_url, llm.base_url, unique, tmp_path)
    ports = {"worker": free_port(), "bridge": free_port()}
    parts = {
        name: ManagedProcess(
            name,
            [sys.executable, "-m", name],
            tmp_path / f"{name}.log",
            env={**env, "TGCA_METRICS_PORT": str(port)},
            ports={"metrics": port},
        )
        for name, port in ports.items()
    }
    for name, part in parts.items():
        port = ports[name]

        async def healthy(_: ManagedProcess, port: int = port) -> bool:
            return (await healthz(port))[0] == 200

        part.ready = healthy
    try:
        for part in parts.values():
            part.start()
        await asyncio.gather(*(part.wait_ready(60) for part in parts.values()))

        for name, port in ports.items():
            assert (await healthz(port))[0] == 200, parts[name].log_tail()
        # The worker plans and answers with the LLM server: it is healthy only while that answers too.
        assert (await healthz(ports["worker"]))[1] == {
            "status": "ok",
            "checks": {"temporal": "ok", "pulsar": "ok", "llm": "ok"},
        }
        assert (await healthz(ports["bridge"]))[1] == {"status": "ok", "checks": {"temporal": "ok", "pulsar": "ok"}}
        async with httpx.AsyncClient(timeout=10) as http:
            worker_metrics = await http.get(f"http://127.0.0.1:{ports['worker']}/metrics")
            bridge_metrics = await http.get(f"http://127.0.0.1:{ports['bridge']}/metrics")
        for response in (worker_metrics, bridge_metrics):
            assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
        assert "agent_audit_pending_records" in worker_metrics.text
        assert "tgca_bridge_request_seconds" in bridge_metrics.text

        # The compose health check's own command, run against the real process.
        probe = (
            f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{ports['worker']}/healthz', timeout=4)"
        )
        done = await asyncio.create_subprocess_exec(sys.executable, "-c", probe)
        assert await done.wait() == 0
    finally:
        for part in parts.values():
            part.stop()


async def test_a_worker_whose_llm_server_does_not_answer_is_unhealthy(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
) -> None:
    """docker-compose.yml's worker points at the `llm` service: without it (its profile off, the model still
    loading, another endpoint down) the worker's health check fails and names the LLM, so `docker compose up`
    does not report a stack that cannot answer as healthy."""
    nothing_there = f"http://127.0.0.1:{free_port()}/v1"
    env = service_env(temporal_env, pulsar_url, falkordb_url, nothing_there, unique, tmp_path)
    port = free_port()
    worker = ManagedProcess(
        "worker",
        [sys.executable, "-m", "worker"],
        tmp_path / "worker.log",
        env={**env, "TGCA_METRICS_PORT": str(port)},
        ports={"metrics": port},
    )

    async def answering(_: ManagedProcess) -> bool:
        return (await healthz(port))[0] in (200, 503)

    worker.ready = answering
    try:
        worker.start()
        await worker.wait_ready(60)
        status, body = await healthz(port)
        assert status == 503 and body["status"] == "unavailable", body
        assert body["checks"]["temporal"] == body["checks"]["pulsar"] == "ok"  # only the LLM is missing
        assert f"{shown_url(nothing_there)} is unreachable" in body["checks"]["llm"], body
        probe = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/healthz', timeout=4)"
        done = await asyncio.create_subprocess_exec(sys.executable, "-c", probe, stderr=asyncio.subprocess.DEVNULL)
        assert await done.wait() != 0  # the compose health check's command fails
    finally:
        worker.stop()


async def test_the_llm_check_asks_the_server_for_its_models_with_the_configured_key(llm: ScriptedLLM) -> None:
    answering = LLMClient(llm.base_url, "scripted", api_key="k-1")
    refused = LLMClient(llm.base_url.replace("/v1", "/missing"), "scripted")
    try:
        outcomes = await run_checks({"answering": llm_check(answering), "refused": llm_check(refused)})
    finally:
        await answering.aclose()
        await refused.aclose()
    assert outcomes["answering"] == "ok"
    assert "HTTP 404 to GET /models" in outcomes["refused"]
    # the checks run side by side: the server may see either first
    assert sorted(((r["path"], r["authorization"]) for r in llm.gets), key=lambda got: got[0]) == [
        ("/missing/models", None),
        ("/v1/models", "Bearer k-1"),
    ]


async def test_healthz_is_503_and_names_the_part_that_does_not_answer(temporal_env: WorkflowEnvironment) -> None:
    registry = CollectorRegistry()
    Counter("tgca_health_probe", "a metric of this server's own registry", registry=registry).inc()
    dead_broker = pulsar_client(f"pulsar://127.0.0.1:{free_port()}")
    server = start_health_server(
        0,
        {
            "temporal": temporal_check(temporal_env.client),
            "pulsar": pulsar_check(dead_broker, "non-persistent://tg/request/x"),
        },
        host="127.0.0.1",
        registry=registry,
    )
    server.timeout_s = 1.0
    try:
        status, body = await healthz(server.port)
        assert status == 503 and body["status"] == "unavailable"
        assert body["checks"]["temporal"] == "ok"
        assert body["checks"]["pulsar"] != "ok"
        async with httpx.AsyncClient(timeout=10) as http:
            metrics = (await http.get(f"http://127.0.0.1:{server.port}/metrics")).text
        assert "tgca_health_probe_total 1.0" in metrics
    finally:
        server.close()
        await dead_broker.close()


def test_healthz_is_503_once_the_service_loop_is_gone() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    server = HealthServer(0, {}, loop, host="127.0.0.1").start()
    try:
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=5)
        assert answer.value.code == 503
        assert json.loads(answer.value.read()) == {"status": "unavailable", "error": "the service is stopping"}
    finally:
        server.close()
