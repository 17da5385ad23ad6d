"""The process's HTTP port: Prometheus metrics, and `/healthz` for container health checks.

`/healthz` answers 200 `{"status": "ok", "checks": {...}}` when every part the process needs answers now
(Temporal; Pulsar when it publishes; the LLM server when it calls one), 503 with the failing part's error
otherwise. The checks run on the service's own event loop, where its Temporal and Pulsar clients live, so a
loop that is stuck or gone reads as unhealthy too. Any other path serves the metrics, as prometheus_client's
own server does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from http.server import ThreadingHTTPServer
from threading import Thread
from typing import Protocol
from urllib.parse import urlparse

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.exposition import MetricsHandler
from pulsar.asyncio import Client as AsyncPulsarClient
from temporalio.client import Client

Check = Callable[[], Awaitable[None]]  # returns when the part answers; raises or hangs when it does not


class ModelLister(Protocol):
    """An LLM client that can ask its server for the model list (backends/llm.LLMClient)."""

    async def answers(self) -> None: ...


CHECK_TIMEOUT_S = 3.0  # well inside a container health check's own timeout


def temporal_check(client: Client) -> Check:
    """Temporal's frontend answers gRPC health checks: SERVING."""

    async def check() -> None:
        if not await client.service_client.check_health(timeout=timedelta(seconds=CHECK_TIMEOUT_S)):
            raise RuntimeError("the frontend is not serving")

    return check


def pulsar_check(client: AsyncPulsarClient, topic: str) -> Check:
    """A topic lookup: a round trip to the broker on the client the process publishes and consumes with."""

    async def check() -> None:
        await client.get_topic_partitions(topic)

    return check


def llm_check(client: ModelLister) -> Check:
    """The OpenAI-compatible server lists its models: a worker that plans, queries or synthesises answers
    nothing without it, so it is not healthy without it either."""
    return client.answers


async def run_checks(checks: Mapping[str, Check], timeout_s: float = CHECK_TIMEOUT_S) -> dict[str, str]:
    """Each check's outcome, all at once: "ok" or why not."""

    async def one(check: Check) -> str:
        try:
            await asyncio.wait_for(check(), timeout_s)
        except TimeoutError:
            return f"no answer within {timeout_s:g} s"
        except Exception as exc:  # any failure of the part is the answer, not an error of this endpoint
            return f"{type(exc).__name__}: {exc}"[:300]
        return "ok"

    outcomes = await asyncio.gather(*(one(check) for check in checks.values()))
    return dict(zip(checks, outcomes, strict=True))


class HealthServer:
    """Serves /healthz and the metrics from a daemon thread; the checks run on `loop`."""

    def __init__(
        self,
        port: int,
        checks: Mapping[str, Check],
        loop: asyncio.AbstractEventLoop,
        host: str,
        registry: CollectorRegistry = REGISTRY,
        timeout_s: float = CHECK_TIMEOUT_S,
    ) -> None:
        self.checks = dict(checks)
        self.timeout_s = timeout_s
        self._loop = loop
        handler = type("HealthMetricsHandler", (_Handler,), {"registry": registry, "health": self})
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self.port: int = self._httpd.server_address[1]
        self._thread = Thread(target=self._httpd.serve_forever, name="health-metrics", daemon=True)

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def report(self) -> tuple[int, dict[str, object]]:
        """The status code and body of /healthz (called on a server thread, never on the loop)."""
        checks = run_checks(self.checks, self.timeout_s)
        try:
            future = asyncio.run_coroutine_threadsafe(checks, self._loop)
        except RuntimeError:  # the loop is closed: the process is on its way out
            checks.close()
            return 503, {"status": "unavailable", "error": "the service is stopping"}
        try:
            outcomes = future.result(self.timeout_s + 2)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return 503, {"status": "unavailable", "error": "the service's event loop does not answer"}
        healthy = all(outcome == "ok" for outcome in outcomes.values())
        return (200 if healthy else 503), {"status": "ok" if healthy else "unavailable", "checks": outcomes}

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(MetricsHandler):
    health: HealthServer

    def do_GET(self) -> None:
        if urlparse(self.path).path != "/healthz":
            super().do_GET()
            return
        status, body = self.health.report()
        payload = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(payload)


def start_health_server(
    port: int, checks: Mapping[str, Check], host: str, registry: CollectorRegistry = REGISTRY
) -> HealthServer:
    """Serve metrics and /healthz on `port` (call it from the service's event loop, which runs the checks)."""
    return HealthServer(port, checks, asyncio.get_running_loop(), host, registry).start()
