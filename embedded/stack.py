"""The embedded stack: start every part (or use an external one), wait for each, supervise, stop all.

Worker, bridge and chat are child processes too, configured through TGCA_* environment variables. The worker
counts as ready only when Temporal sees its own pollers on its task queues; the bridge and the chat, which poll
none, when their own /healthz answers (the bridge serves it only once subscribed to the request topics).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import httpx
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from actions.ontology import Ontology
from contracts.names import SEARCH_ATTRIBUTES, TaskQueues
from contracts.redaction import shown_url
from embedded import demo_graph, part_guard
from embedded.model_weights import resolve_model
from embedded.parts import falkordb_server, llm_server, pulsar_broker, temporal_server
from embedded.processes import ManagedProcess, ReadyCheck, free_port, tcp_open
from embedded.stack_state import ProcessRecord, StackRecord, StackState
from embedded.supervisor import Supervisor
from service.connections import PartUnreachable, connect_temporal


@dataclass
class StackOptions:
    data_dir: Path
    temporal_address: str | None = None  # external server; None starts the dev server
    temporal_namespace: str = "default"
    temporal_port: int = 7233
    ui_port: int = 8233
    pulsar_url: str | None = None
    pulsar_port: int = 6650
    falkordb_url: str | None = None
    falkordb_port: int = 6379
    graph_name: str = "procurement"
    load_demo_graph: bool = True
    llm_base_url: str | None = None
    llm_port: int = 8080
    llm_model: str = "qwen2.5-coder-1.5b-instruct"
    llm_api_key: str = ""
    model_path: Path | None = None
    metrics_port: int = 8000
    http_port: int = 8765  # the chat API and UI; 0: not started
    http_host: str = "127.0.0.1"
    log_level: str = "INFO"
    extra_env: dict[str, str] = field(default_factory=dict)
    # The task queues the worker polls (from the configuration): `up` waits for its pollers.
    queues: TaskQueues = field(default_factory=TaskQueues)


@dataclass
class Endpoint:
    part: str
    address: str
    note: str = ""


def _host_port(url: str, default_port: int) -> tuple[str, int]:
    parsed = urlparse(url)
    return parsed.hostname or "127.0.0.1", parsed.port or default_port


async def _require_tcp(part: str, url: str, default_port: int) -> None:
    host, port = _host_port(url, default_port)
    if not await tcp_open(port, host):
        raise PartUnreachable(
            f"{part} at {shown_url(url)} is unreachable (nothing accepts connections on {host}:{port})"
        )


async def _require_llm(base_url: str, api_key: str) -> None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            response = await http.get(f"{base_url.rstrip('/')}/models", headers=headers)
    except httpx.HTTPError as exc:
        raise PartUnreachable(f"LLM server at {shown_url(base_url)} is unreachable: {exc}") from exc
    if response.status_code >= 400:
        raise PartUnreachable(
            f"LLM server at {shown_url(base_url)} answered HTTP {response.status_code} to GET /models"
        )


async def _has_own_poller(client: Client, queue: str, kind: TaskQueueType.ValueType, pid: int) -> bool:
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(namespace=client.namespace, task_queue=TaskQueue(name=queue), task_queue_type=kind)
    )
    # The SDK's default identity is "<pid>@<host>": stale pollers of an earlier run don't count.
    return any(p.identity.startswith(f"{pid}@") for p in response.pollers)


def _serves_http(host: str, port: int) -> ReadyCheck:
    async def ready(part: ManagedProcess) -> bool:
        async with httpx.AsyncClient(timeout=2) as http:
            return (await http.get(f"http://{host}:{port}/healthz")).status_code == 200

    return ready


class EmbeddedStack:
    def __init__(self, options: StackOptions, say: Callable[[str], None] = print) -> None:
        self.o = options
        self.say = say
        self.children: list[ManagedProcess] = []
        self.endpoints: list[Endpoint] = []
        self.temporal_address = options.temporal_address or f"127.0.0.1:{options.temporal_port}"
        self.pulsar_url = options.pulsar_url or f"pulsar://127.0.0.1:{options.pulsar_port}"
        self.falkordb_url = options.falkordb_url or f"redis://127.0.0.1:{options.falkordb_port}"
        self.llm_base_url = options.llm_base_url or f"http://127.0.0.1:{options.llm_port}/v1"
        # The chat's open-mode token (used when no http_tokens are configured): in the link `up` prints only.
        self.chat_token = secrets.token_urlsafe(24)
        self.queues = options.queues
        self.state = StackState(options.data_dir)

    @property
    def ui_url(self) -> str | None:
        return None if self.o.temporal_address else f"http://127.0.0.1:{self.o.ui_port}"

    @property
    def chat_url(self) -> str | None:
        return f"http://{self.o.http_host}:{self.o.http_port}/" if self.o.http_port else None

    @property
    def chat_link(self) -> str | None:
        """The chat's address with open mode's token in its fragment, which the page keeps (never sent)."""
        return f"{self.chat_url}#token={self.chat_token}" if self.chat_url else None

    async def start(self) -> None:
        """Start the servers in parallel, then the worker and the bridge; stop everything on failure."""
        try:
            await self._start()
        except BaseException:
            self.stop()
            raise

    def _servers(self) -> list[tuple[ManagedProcess, float]]:
        """The servers to start, with how long each may take to become ready."""
        d, o = self.o.data_dir, self.o
        servers: list[tuple[ManagedProcess, float]] = []
        if o.temporal_address is None:
            servers.append((temporal_server(d, o.temporal_port, o.ui_port, SEARCH_ATTRIBUTES), 90))
            self.endpoints.append(Endpoint("Temporal", self.temporal_address, f"Web UI {self.ui_url}"))
        if o.pulsar_url is None:
            servers.append((pulsar_broker(d, o.pulsar_port), 30))
            self.endpoints.append(Endpoint("Pulsar broker", self.pulsar_url))
        if o.falkordb_url is None:
            servers.append((falkordb_server(d, o.falkordb_port), 30))
            self.endpoints.append(Endpoint("FalkorDB", self.falkordb_url))
        if o.llm_base_url is None:
            model = resolve_model(o.model_path)
            self.say(f"model: {model.path} (from {model.source}, sha256 verified)")
            servers.append((llm_server(d, model.path, o.llm_port, o.llm_model), 180))
            self.endpoints.append(Endpoint("LLM server", self.llm_base_url, f"model {o.llm_model}"))
        return servers

    async def _start(self) -> None:
        self.o.data_dir.mkdir(parents=True, exist_ok=True)
        servers = self._servers()
        services = self._services()
        for part in [*(p for p, _ in servers), *services]:  # every port first: fail before starting anything
            part.check_ports()
            part.on_start = self._record
        await self._check_external()
        for part, _ in servers:
            self.children.append(part)
            part.start()
        waits = [asyncio.ensure_future(part.wait_ready(timeout)) for part, timeout in servers]
        try:
            await asyncio.gather(*waits)
        finally:
            for w in waits:
                w.cancel()
        if self.o.load_demo_graph:
            if await demo_graph.load(self.falkordb_url, self.o.graph_name):
                self.say(f"loaded the demo procurement graph into '{self.o.graph_name}'")
            await demo_graph.load_ontology(
                self.falkordb_url, self.o.graph_name, Ontology.load(demo_graph.ONTOLOGY_PATH)
            )
        await self._start_services(services)

    async def _check_external(self) -> None:
        if self.o.temporal_address:
            await connect_temporal(self.o.temporal_address, self.o.temporal_namespace)
            self.endpoints.append(Endpoint("Temporal (external)", self.o.temporal_address))
        if self.o.pulsar_url:
            await _require_tcp("Pulsar", self.o.pulsar_url, 6650)
            self.endpoints.append(Endpoint("Pulsar (external)", shown_url(self.o.pulsar_url)))
        if self.o.falkordb_url:
            await _require_tcp("FalkorDB", self.o.falkordb_url, 6379)
            self.endpoints.append(Endpoint("FalkorDB (external)", shown_url(self.o.falkordb_url)))
        if self.o.llm_base_url:
            await _require_llm(self.o.llm_base_url, self.o.llm_api_key)
            self.endpoints.append(
                Endpoint("LLM (external)", shown_url(self.o.llm_base_url), f"model {self.o.llm_model}")
            )

    def service_env(self) -> dict[str, str]:
        return {
            "TGCA_TEMPORAL_ADDRESS": self.temporal_address,
            "TGCA_TEMPORAL_NAMESPACE": self.o.temporal_namespace,
            "TGCA_PULSAR_URL": self.pulsar_url,
            "TGCA_FALKORDB_URL": self.falkordb_url,
            "TGCA_GRAPH_NAME": self.o.graph_name,
            "TGCA_LLM_BASE_URL": self.llm_base_url,
            "TGCA_LLM_MODEL": self.o.llm_model,
            "TGCA_LLM_API_KEY": self.o.llm_api_key,
            "TGCA_METRICS_PORT": str(self.o.metrics_port),
            "TGCA_LOG_LEVEL": self.o.log_level,
            "TGCA_AUDIT_PATH": str(self.o.data_dir / "audit.jsonl"),
            **({"TGCA_ONTOLOGY_PATH": str(demo_graph.ONTOLOGY_PATH)} if self.o.load_demo_graph else {}),
            # The embedded dev server registers them; an external cluster needs
            # `temporal operator search-attribute create` first (see docs/operations.md, "Search attributes").
            "TGCA_AGENT__SEARCH_ATTRIBUTES": "false" if self.o.temporal_address else "true",
            **self.o.extra_env,
        }

    def _services(self) -> list[ManagedProcess]:
        """The worker and the bridge, configured through the environment."""
        env = self.service_env()
        worker = ManagedProcess(
            "Worker (tg-confidence-agent)",
            [sys.executable, "-m", "worker"],
            self.o.data_dir / "worker.log",
            env=env,
            ports={"metrics": self.o.metrics_port} if self.o.metrics_port else {},
        )
        # One metrics port per process: the worker's is the stack's; the bridge's, any free one, is how the
        # stack sees it ready (its /healthz).
        bridge_port = free_port()
        bridge = ManagedProcess(
            "Bridge (tg-confidence-bridge)",
            [sys.executable, "-m", "bridge"],
            self.o.data_dir / "bridge.log",
            ports={"metrics": bridge_port},
            env={**env, "TGCA_METRICS_PORT": str(bridge_port)},
        )
        bridge.ready = _serves_http("127.0.0.1", bridge_port)
        if not self.o.http_port:
            return [worker, bridge]
        chat = ManagedProcess(
            "Chat API and UI (tg-confidence-chat)",
            [sys.executable, "-m", "chat"],
            self.o.data_dir / "chat.log",
            ports={"HTTP": self.o.http_port},
            env={
                **env,
                "TGCA_METRICS_PORT": "0",
                "TGCA_HTTP_PORT": str(self.o.http_port),
                "TGCA_HTTP_HOST": self.o.http_host,
                "TGCA_TEMPORAL_UI_URL": self.ui_url or "",
                "TGCA_HTTP_LOCAL_TOKEN": self.chat_token,
            },
        )
        chat.ready = _serves_http(self.o.http_host, self.o.http_port)
        return [worker, bridge, chat]

    async def _start_services(self, services: list[ManagedProcess]) -> None:
        worker, bridge, *chat = services
        client = await connect_temporal(self.temporal_address, self.o.temporal_namespace)
        q = self.queues
        worker.ready = self._pollers_ready(
            client,
            [(q.workflow, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW), (q.tools, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)],
        )
        for part in (worker, bridge, *chat):
            self.children.append(part)
            part.start()
        await asyncio.gather(*(part.wait_ready(60) for part in (worker, bridge, *chat)))
        self.endpoints.append(
            Endpoint("Worker", f"metrics http://127.0.0.1:{self.o.metrics_port}/metrics", f"log {worker.log_path}")
        )
        bridge_metrics = f"metrics http://127.0.0.1:{bridge.ports['metrics']}/metrics"
        self.endpoints.append(Endpoint("Bridge", self.pulsar_url, f"{bridge_metrics}; log {bridge.log_path}"))
        for part in chat:
            self.endpoints.append(
                Endpoint(
                    "Chat (browser UI, API)", self.chat_link or "", f"API docs {self.chat_url}docs; log {part.log_path}"
                )
            )

    @staticmethod
    def _pollers_ready(client: Client, queues: list[tuple[str, TaskQueueType.ValueType]]) -> ReadyCheck:
        async def ready(part: ManagedProcess) -> bool:
            assert part.pid is not None
            for queue, kind in queues:
                if not await _has_own_poller(client, queue, kind, part.pid):
                    return False
            return True

        return ready

    async def supervise(self, stop: asyncio.Event, say: Callable[[str], None]) -> int:
        """Restart a child that dies (see embedded/supervisor.py) until `stop` is set: 0; or 1 when one
        keeps dying (more than 5 restarts within 5 minutes), after saying which and why."""
        return await Supervisor(self.children, say).run(stop)

    def _record(self, _: ManagedProcess | None = None) -> None:
        """Write which process owns the stack and each part's pid (after every start and restart). Best
        effort: a record that cannot be written (disk full) costs `down`/`ps`, never the running stack."""
        try:
            self.state.write(
                StackRecord(
                    owner=ProcessRecord.of(os.getpid()),
                    parts=[p.record() for p in self.children if p.process is not None],
                    guard=part_guard.current(),
                )
            )
        except OSError as exc:
            self.say(
                f"could not write the stack record {self.state.path}: {exc} (`tg-confidence down` and `ps` "
                "will not see this stack)"
            )

    def stop(self) -> None:
        """Stop in reverse start order: the bridge and worker first, the servers they use last."""
        for part in reversed(self.children):
            part.stop()
        if self.children:
            self.state.clear_if_owner(os.getpid())
        self.children.clear()


def default_data_dir() -> Path:
    return Path(os.environ.get("TGCA_DATA_DIR") or Path.home() / ".tg-confidence")
