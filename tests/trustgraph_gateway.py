"""TrustGraph 2.11.1's own `api-gateway`, `triples-write-falkordb` and `triples-query-falkordb` (trustgraph-flow,
from .venv-trustgraph, as subprocesses) on the test broker and the test FalkorDB, and the two TrustGraph services
they need that cannot run here, stood in for on TrustGraph's queues with TrustGraph's schema classes
(trustgraph-base):

- config (`request:tg:config`, `notify:tg:config`): TrustGraph's `config-svc` keeps its state in Cassandra. The
  stand-in keeps it in memory (workspace, type) -> key -> JSON text and answers what the gateway and the
  processors ask (`getvalues`, `getkeys-all-ws`, `getvalues-all-ws`, `config`). Starting a flow stores what
  `tg-start-flow` has flow-svc store (the `flow` entry with its interfaces, each processor's
  `processor:<id>` entry with its topics, the workspace, a `collection`) and pushes the change, as config-svc does.
- librarian (`request:tg:librarian:<workspace>`): TrustGraph's `librarian` keeps its documents' metadata in
  Cassandra and their content in an S3 object store (MinIO/Ceph), neither of which runs here. The stand-in keeps
  them in memory and answers as librarian/librarian.py does the operations the agent and the CLIs use
  (`add-document`, refusing an id it has; `get-document-content`; `get-document-metadata`; `stream-document`,
  one chunk), on the per-workspace queues TrustGraph's librarian consumes (created as a workspace is).
- IAM (`request:tg:iam`): `iam-svc` needs Cassandra; `no-auth-svc` runs, but answers the gateway's start-up request
  for the JWT signing key with an empty key, on which the 2.11.1 gateway retries 30 times, 2 s apart, before it
  listens. The stand-in is no-auth-svc's policy (an anonymous caller, every request allowed) with a signing key,
  as iam-svc gives one.

The bridge writes its explain triples to the flow's `triples-store` queue; TrustGraph's FalkorDB writer stores
them and its FalkorDB query service answers the `triples` queries that `tg-show-explain-trace` and
`tg-list-explain-traces` make through the gateway. The worker writes each step result's and answer's document to
the workspace's librarian, which the stand-in keeps for `tg-show-explain-trace` and `tg-get-document-content`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulsar
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from falkordb.asyncio import FalkorDB
from trustgraph.base.serialization import dataclass_to_dict, dict_to_dataclass
from trustgraph.schema import (
    ConfigPush,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    Error,
    IamRequest,
    IamResponse,
    LibrarianRequest,
    LibrarianResponse,
    Triples,
    WorkspaceChanges,
)

from embedded.processes import ManagedProcess, free_port, tcp_open
from service.connections import pulsar_client

ROOT = Path(__file__).resolve().parent.parent
TG_BIN = ROOT / ".venv-trustgraph" / "bin"  # scripts/setup.sh; CI always has it
WRITER, QUERY = "triples-write", "triples-query"  # the processors' ids, as TrustGraph deploys them
COLLECTIONS = ("default",)  # tg-invoke-agent's and the explain CLIs' default collection


def tg_program(name: str) -> str:
    return str(TG_BIN / name)


def topic(queue: str) -> str:
    """The Pulsar topic of a TrustGraph queue id (`class:topicspace:topic`), as trustgraph-base maps it."""
    kind, space, name = queue.split(":", 2)
    return f"{'persistent' if kind == 'flow' else 'non-persistent'}://{space}/{kind}/{name}"


def flow_config(workspace: str, flow: str) -> dict[tuple[str, str], dict[str, str]]:
    """What flow-svc stores when a flow of a 2.x blueprint starts: the flow's interfaces (what the gateway
    routes) and each processor's topics in it."""

    def q(kind: str, service: str) -> str:
        return f"{kind}:tg:{service}:{workspace}:{flow}"

    interfaces = {
        "agent": {"request": q("request", "agent"), "response": q("response", "agent")},
        "triples": {"request": q("request", "triples"), "response": q("response", "triples")},
        "triples-store": {"flow": q("flow", "triples-store")},
    }
    entry = {
        "description": "confidence agent",
        "blueprint-name": "tgca-test",
        "parameters": {},
        "interfaces": interfaces,
    }
    writer = {"topics": {"input": q("flow", "triples-store")}, "parameters": {}}
    query = {"topics": {"request": q("request", "triples"), "response": q("response", "triples")}, "parameters": {}}
    return {
        ("__workspaces__", "workspace"): {workspace: json.dumps({"enabled": True})},
        (workspace, "flow"): {flow: json.dumps(entry)},
        (workspace, f"processor:{WRITER}"): {flow: json.dumps(writer)},
        (workspace, f"processor:{QUERY}"): {flow: json.dumps(query)},
        (workspace, "collection"): {c: json.dumps({"name": c, "description": "", "tags": []}) for c in COLLECTIONS},
    }


Handler = Callable[[Any], Awaitable[Any]]


@dataclass
class StandIns:
    """TrustGraph's config and IAM services, in this process."""

    pulsar_url: str
    config: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (workspace, type) -> key -> JSON
    sent: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)  # workspace -> triples sent to its store
    # workspace -> document id -> (metadata, content): what the librarian stand-in holds
    documents: dict[str, dict[str, tuple[Any, bytes]]] = field(default_factory=dict)
    version: int = 1
    signing_key: str = ""
    _client: Any = None
    _notify: Any = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def start(self) -> None:
        self._client = pulsar_client(self.pulsar_url)
        self.signing_key = (
            Ed25519PrivateKey.generate()
            .public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
        )
        await self._serve("request:tg:config", "response:tg:config", ConfigRequest, self._config)
        await self._serve("request:tg:iam", "response:tg:iam", IamRequest, self._iam)
        self._notify = await self._client.create_producer(topic("notify:tg:config"), batching_enabled=False)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._client.close()

    async def start_flow(self, workspace: str, flow: str) -> None:
        """Store the flow's config and push the change, as config-svc does when `tg-start-flow` starts one."""
        changes: dict[str, list[str]] = {}
        for (ws, kind), entries in flow_config(workspace, flow).items():
            self.config.setdefault((ws, kind), {}).update(entries)
            if not ws.startswith("_"):
                changes.setdefault(kind, []).append(ws)
        self.sent[workspace] = set()
        if workspace not in self.documents:  # TrustGraph's librarian subscribes as the workspace is created
            self.documents[workspace] = {}
            await self._serve(
                f"request:tg:librarian:{workspace}",
                f"response:tg:librarian:{workspace}",
                LibrarianRequest,
                lambda request: self._librarian(workspace, request),
            )
        store = await self._client.subscribe(
            topic(f"flow:tg:triples-store:{workspace}:{flow}"),
            f"sent-{uuid.uuid4().hex[:8]}",
            initial_position=pulsar.InitialPosition.Earliest,
        )
        self._tasks.append(asyncio.create_task(self._note(store, self.sent[workspace])))
        self.version += 1
        push = ConfigPush(
            version=self.version, changes=changes, workspace_changes=WorkspaceChanges(created=[workspace])
        )
        await self._notify.send(json.dumps(dataclass_to_dict(push)).encode())

    async def _note(self, consumer: Any, into: set[tuple[str, ...]]) -> None:
        """Each triple sent to a triples store, as the FalkorDB writer tells its edges apart."""
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            sent = dict_to_dataclass(json.loads(message.data()), Triples)
            collection = sent.metadata.collection if sent.metadata else ""
            into.update(
                (collection or "default", t.s.iri, t.p.iri, t.o.type, t.o.iri if t.o.type == "i" else t.o.value)
                for t in sent.triples
            )

    async def _serve(self, request_queue: str, response_queue: str, schema: type, handler: Handler) -> None:
        consumer = await self._client.subscribe(
            topic(request_queue), f"standin-{uuid.uuid4().hex[:8]}", consumer_type=pulsar.ConsumerType.Shared
        )
        producer = await self._client.create_producer(topic(response_queue), batching_enabled=False)

        async def serve() -> None:
            while True:
                message = await consumer.receive()
                await consumer.acknowledge(message)
                response = await handler(dict_to_dataclass(json.loads(message.data()), schema))
                await producer.send(
                    json.dumps(dataclass_to_dict(response)).encode(), properties={"id": message.properties()["id"]}
                )

        self._tasks.append(asyncio.create_task(serve()))

    async def _config(self, request: ConfigRequest) -> ConfigResponse:
        op, kind = request.operation, request.type
        if op == "getvalues":
            values = [
                ConfigValue(type=kind, key=k, value=v)
                for k, v in self.config.get((request.workspace, kind), {}).items()
            ]
        elif op in ("getkeys-all-ws", "getvalues-all-ws"):
            values = [
                ConfigValue(type=kind, key=k, value=v if op == "getvalues-all-ws" else "", workspace=ws)
                for (ws, t), entries in self.config.items()
                if t == kind
                for k, v in entries.items()
            ]
        elif op == "config":
            return ConfigResponse(
                version=self.version,
                config={t: dict(entries) for (ws, t), entries in self.config.items() if ws == request.workspace},
            )
        else:
            return ConfigResponse(error=Error(type="bad-request", message=f"not stood in for: {op}"))
        return ConfigResponse(version=self.version, values=values)

    async def _librarian(self, workspace: str, request: LibrarianRequest) -> LibrarianResponse:
        """As librarian/librarian.py answers (its errors as librarian/service.py sends them)."""
        stored = self.documents[workspace]
        if request.operation == "add-document":
            if request.document_metadata is None or not request.document_metadata.kind:
                return LibrarianResponse(
                    error=Error(type="request-error", message="Document kind (MIME type) is required")
                )
            if request.document_metadata.id in stored:
                return LibrarianResponse(error=Error(type="unexpected-error", message="Document already exists"))
            stored[request.document_metadata.id] = (request.document_metadata, base64.b64decode(request.content))
            return LibrarianResponse()
        found = stored.get(request.document_id)
        if request.operation in ("get-document-content", "stream-document", "get-document-metadata"):
            if found is None:
                return LibrarianResponse(
                    error=Error(type="request-error", message=f"Document not found: {request.document_id}")
                )
            metadata, content = found
            if request.operation == "get-document-metadata":
                return LibrarianResponse(document_metadata=metadata)
            if request.operation == "stream-document":
                return LibrarianResponse(
                    content=base64.b64encode(content),
                    chunk_index=0,
                    chunks_received=1,
                    total_chunks=1,
                    bytes_received=len(content),
                    total_bytes=len(content),
                )
            return LibrarianResponse(content=base64.b64encode(content))
        return LibrarianResponse(error=Error(type="request-error", message=f"not stood in for: {request.operation}"))

    async def _iam(self, request: IamRequest) -> IamResponse:
        if request.operation in ("authenticate-anonymous", "resolve-api-key"):
            return IamResponse(
                resolved_user_id="anonymous", resolved_default_workspace="default", resolved_roles=["admin"]
            )
        if request.operation == "authorise":
            return IamResponse(decision_allow=True, decision_ttl_seconds=3600)
        if request.operation == "get-signing-key-public":
            return IamResponse(signing_key_public=self.signing_key)
        return IamResponse(error=Error(type="invalid-argument", message=f"not stood in for: {request.operation}"))


@dataclass
class Gateway:
    url: str
    services: StandIns
    gateway: ManagedProcess
    writer: ManagedProcess
    query: ManagedProcess
    graph: Any  # the writer's FalkorDB graph

    async def stored(self, workspace: str, timeout_s: float = 60) -> None:
        """Wait until TrustGraph's writer has stored every triple sent to the workspace's triples store so far
        (its edges, one per distinct triple): a run's explain triples are sent before its answer, and the writer
        stores them as it gets to them."""
        count = "MATCH ()-[r:Rel {workspace: $ws}]->() RETURN count(r)"
        for _ in range(int(timeout_s * 10)):
            [[edges]] = (await self.graph.query(count, {"ws": workspace})).result_set
            if self.services.sent[workspace] and edges >= len(self.services.sent[workspace]):
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(
            f"the writer stored {edges} of {len(self.services.sent[workspace])} triples:\n{self.writer.log_tail(30)}"
        )

    async def start_flow(self, workspace: str, flow: str, timeout_s: float = 30) -> None:
        """Start a flow and wait until the gateway routes it, the writer stores its triples (its collections
        made) and the query service answers on it: each logs so once it has."""
        await self.services.start_flow(workspace, flow)
        waits = [
            (self.gateway, f"Starting flow {workspace}/{flow}"),
            (self.writer, f"Started flow: {workspace}/{flow}"),
            (self.query, f"Started flow: {workspace}/{flow}"),
        ]
        waits += [(self.writer, f"Created collection {workspace}/{c}") for c in COLLECTIONS]
        for _ in range(int(timeout_s * 10)):
            waits = [(p, line) for p, line in waits if line not in p.log_path.read_text(errors="replace")]
            if not waits:
                return
            await asyncio.sleep(0.1)
        part, line = waits[0]
        raise TimeoutError(f"{part.name} never logged {line!r}:\n{part.log_tail(30)}")


# What the gateway logs once its first fetch of every workspace is done and it acts on config pushes.
LOADED = "Config loader initialised, waiting for notifys"


def _process(name: str, argv: list[str], log_dir: Path, **options: Any) -> ManagedProcess:
    """One of TrustGraph's programs as its container runs it, without Loki and the Prometheus endpoint (nothing
    here reads them)."""
    return ManagedProcess(
        f"TrustGraph {name}",
        [tg_program(name), *argv, "--no-metrics", "--no-loki-enabled", "-l", "INFO"],
        log_dir / f"{name}.log",
        **options,
    )


@asynccontextmanager
async def running_gateway(pulsar_url: str, falkordb_url: str, log_dir: Path) -> AsyncIterator[Gateway]:
    """The gateway, ready once it listens (by then it has its signing key and is fetching its flows), and the
    FalkorDB triples writer and query service on a graph of their own."""
    async with AsyncExitStack() as stack:
        services = StandIns(pulsar_url)
        await services.start()
        stack.push_async_callback(services.stop)
        port = free_port()

        async def listening(_: ManagedProcess) -> bool:
            return await tcp_open(port)

        database = f"tg-explain-{uuid.uuid4().hex[:8]}"
        falkor = ["-g", falkordb_url, "--database", database]
        db = FalkorDB.from_url(falkordb_url)
        stack.push_async_callback(db.aclose)
        graph = db.select_graph(database)
        await graph.query("RETURN 1")  # the client's lazy imports now, not inside a running workflow worker

        async def delete_graph() -> None:  # after the writer has stopped
            with contextlib.suppress(Exception):  # never written: nothing to delete
                await graph.delete()

        stack.push_async_callback(delete_graph)
        parts = [
            _process(
                "api-gateway",
                ["-p", pulsar_url, "--port", str(port), "--timeout", "120"],
                log_dir,
                ports={"http": port},
                ready=listening,
            ),
            _process("triples-write-falkordb", ["--id", WRITER, "-p", pulsar_url, *falkor], log_dir),
            _process("triples-query-falkordb", ["--id", QUERY, "-p", pulsar_url, *falkor], log_dir),
        ]
        for part in parts:
            stack.callback(part.stop)
            part.start()
        for part in parts:
            await part.wait_ready(60)
        # The gateway's first look at the workspaces replaces the set it knows, and it takes the config version
        # its fetches answer: a flow started before that look ends would be forgotten (its workspace "not found",
        # or its push ignored as a version already seen), so none starts until the gateway says it is done.
        for _ in range(600):
            if LOADED in parts[0].log_path.read_text(errors="replace"):
                break
            await asyncio.sleep(0.1)
        yield Gateway(f"http://127.0.0.1:{port}/", services, *parts, graph)


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str


async def run_cli(program: str, *args: str, timeout_s: float = 90) -> Ran:
    """One of TrustGraph's CLI programs, as a user runs it; its output as they see it."""
    process = await asyncio.create_subprocess_exec(
        tg_program(program),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": ""},
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        raise AssertionError(f"{program} did not finish in {timeout_s} s:\n{out.decode()}\n{err.decode()}") from None
    assert process.returncode is not None
    return Ran(process.returncode, out.decode(), err.decode())
